#include "memory/ipc/detail/process_identity.hpp"

#include <unistd.h>

#include <charconv>
#include <string_view>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/detail/text_file.hpp"
#include "cudakit/core/error.hpp"

namespace cudakit::memory::detail {
namespace {

struct StatFields {
  char state = '?';
  std::uint64_t start_time = 0;
};

// State (field 3) and start time (field 22) from /proc/<pid>/stat. The command name (field 2)
// is in parentheses and may itself hold spaces and parentheses: fields are counted from the
// last ')'.
std::optional<StatFields> read_stat(pid_t pid) {
  const std::optional<std::string> read =
      cudakit::detail::try_read_text_file(cudakit::detail::concat("/proc/", pid, "/stat"));
  if (!read) return std::nullopt;
  const std::string& text = *read;
  const std::size_t close = text.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::string_view rest(text);
  rest.remove_prefix(close + 1);
  StatFields out;
  // After ')': field 3 is the first, field 22 the twentieth.
  int field = 2;
  std::size_t i = 0;
  while (i < rest.size()) {
    while (i < rest.size() && rest[i] == ' ') ++i;
    std::size_t end = i;
    while (end < rest.size() && rest[end] != ' ' && rest[end] != '\n') ++end;
    if (end == i) break;
    ++field;
    const std::string_view token = rest.substr(i, end - i);
    if (field == 3) out.state = token[0];
    if (field == 22) {
      const auto [p, ec] = std::from_chars(token.data(), token.data() + token.size(), out.start_time);
      if (ec != std::errc{} || p != token.data() + token.size()) return std::nullopt;
      return out;
    }
    i = end;
  }
  return std::nullopt;
}

}  // namespace

ProcessId self_process() {
  const pid_t pid = ::getpid();
  const std::optional<StatFields> stat = read_stat(pid);
  if (!stat) throw StateError("IPC memory", cudakit::detail::concat("cannot read /proc/", pid, "/stat"));
  return {pid, stat->start_time};
}

std::optional<ProcessId> find_process(pid_t pid) {
  if (pid <= 0) return std::nullopt;
  const std::optional<StatFields> stat = read_stat(pid);
  if (!stat || stat->state == 'Z' || stat->state == 'X') return std::nullopt;
  return ProcessId{pid, stat->start_time};
}

bool process_alive(const ProcessId& process) {
  const std::optional<ProcessId> now = find_process(process.pid);
  return now && *now == process;
}

const std::string& boot_id() {
  static const std::string id = [] {
    constexpr const char* kPath = "/proc/sys/kernel/random/boot_id";
    std::optional<std::string> text = cudakit::detail::try_read_text_file(kPath);
    if (!text) throw StateError("IPC memory", cudakit::detail::concat("cannot read ", kPath));
    while (!text->empty() && (text->back() == '\n' || text->back() == ' ')) text->pop_back();
    return *text;
  }();
  return id;
}

}  // namespace cudakit::memory::detail
