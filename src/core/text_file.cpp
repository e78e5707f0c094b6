#include "cudakit/core/detail/text_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/error.hpp"

namespace cudakit::detail {
namespace {

[[noreturn]] void fail(const char* api, const char* what, const std::string& path, int error) {
  throw InvalidArgumentError(api, concat("cannot ", what, " ", path, ": ", std::strerror(error)));
}

// fopen's "wb" (replace) or "ab" (append).
void write_with_mode(const std::string& path, const std::string& text, const char* api, const char* mode) {
  std::FILE* file = std::fopen(path.c_str(), mode);
  if (file == nullptr) fail(api, "write", path, errno);
  const bool written = std::fwrite(text.data(), 1, text.size(), file) == text.size();
  const int error = errno;
  if (std::fclose(file) != 0 && written) fail(api, "write", path, errno);
  if (!written) fail(api, "write", path, error);
}

}  // namespace

std::optional<std::string> try_read_text_file(const std::string& path, int* error) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    if (error != nullptr) *error = errno;
    return std::nullopt;
  }
  std::string text;
  char chunk[1 << 16];
  std::size_t n = 0;
  while ((n = std::fread(chunk, 1, sizeof chunk, file)) > 0) text.append(chunk, n);
  const bool failed = std::ferror(file) != 0;
  const int read_error = errno;
  std::fclose(file);
  if (failed) {
    if (error != nullptr) *error = read_error;
    return std::nullopt;
  }
  return text;
}

std::string read_text_file(const std::string& path, const char* api) {
  int error = 0;
  std::optional<std::string> text = try_read_text_file(path, &error);
  if (!text) fail(api, "read", path, error);
  return std::move(*text);
}

void write_text_file(const std::string& path, const std::string& text, const char* api) {
  write_with_mode(path, text, api, "wb");
}

std::string try_write_text_file_atomically(const std::string& path, const std::string& text) {
  static std::atomic<unsigned> counter{0};
  const std::string temporary = concat(path, ".tmp.", ::getpid(), ".", counter.fetch_add(1));
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return concat("cannot create ", temporary, ": ", std::strerror(errno));
  std::size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      std::string error = concat("cannot write ", temporary, ": ", std::strerror(errno));
      ::close(fd);
      ::unlink(temporary.c_str());
      return error;
    }
    written += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0 || ::rename(temporary.c_str(), path.c_str()) != 0) {
    std::string error = concat("cannot move ", temporary, " to ", path, ": ", std::strerror(errno));
    ::unlink(temporary.c_str());
    return error;
  }
  return {};
}

void write_text_file_atomically(const std::string& path, const std::string& text, const char* api) {
  if (std::string error = try_write_text_file_atomically(path, text); !error.empty()) {
    throw InvalidArgumentError(api, error);
  }
}

void append_text_file(const std::string& path, const std::string& text, const char* api) {
  write_with_mode(path, text, api, "ab");
}

}  // namespace cudakit::detail
