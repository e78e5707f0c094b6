#include "memory/host/detail/host_memory.hpp"

#include <algorithm>
#include <charconv>
#include <string>

#include "cudakit/core/detail/text_file.hpp"

namespace cudakit::memory::detail {
namespace {

using cudakit::detail::try_read_text_file;

// The unsigned integer at the start of `text`, after blanks.
std::optional<std::size_t> leading_number(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  std::size_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end == text.data()) return std::nullopt;
  return value;
}

// The cgroup v2 directory of this process ("0::/path" in /proc/self/cgroup).
std::string cgroup_directory() {
  const auto cgroups = try_read_text_file("/proc/self/cgroup");
  std::string_view rest = cgroups ? std::string_view(*cgroups) : std::string_view{};
  while (!rest.empty()) {
    const std::size_t eol = rest.find('\n');
    const std::string_view line = rest.substr(0, eol);
    if (line.starts_with("0::")) return "/sys/fs/cgroup" + std::string(line.substr(3));
    rest = eol == std::string_view::npos ? std::string_view{} : rest.substr(eol + 1);
  }
  return "/sys/fs/cgroup";
}

}  // namespace

std::optional<std::size_t> meminfo_available(std::string_view meminfo) {
  constexpr std::string_view kKey = "MemAvailable:";
  const std::size_t at = meminfo.find(kKey);
  if (at == std::string_view::npos) return std::nullopt;
  const auto kib = leading_number(meminfo.substr(at + kKey.size()));
  if (!kib) return std::nullopt;
  return *kib * 1024;  // the file says kB and means KiB
}

std::optional<std::size_t> cgroup_headroom(std::string_view memory_max, std::string_view memory_current) {
  const auto max = leading_number(memory_max);
  const auto current = leading_number(memory_current);
  if (!max || !current) return std::nullopt;  // "max": no limit
  return *max > *current ? *max - *current : 0;
}

std::optional<std::size_t> host_memory_available() {
  std::optional<std::size_t> available;
  if (const auto meminfo = try_read_text_file("/proc/meminfo")) available = meminfo_available(*meminfo);
  // A process stays in its cgroup, so the directory is looked up once; the figures change.
  static const std::string directory = cgroup_directory();
  const auto max = try_read_text_file(directory + "/memory.max");
  const auto current = try_read_text_file(directory + "/memory.current");
  if (max && current) {
    if (const auto headroom = cgroup_headroom(*max, *current)) {
      available = available ? std::min(*available, *headroom) : *headroom;
    }
  }
  return available;
}

}  // namespace cudakit::memory::detail
