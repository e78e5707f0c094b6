#include "cudakit/core/detail/text_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <utility>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/detail/outside_input.hpp"
#include "cudakit/core/error.hpp"

namespace cudakit::detail {
namespace {

[[noreturn]] void fail(const char* api, const char* what, const std::string& path, int error) {
  throw FileError(error, api, concat("cannot ", what, " ", path, ": ", std::strerror(error)));
}

// Writes all of `text` to `fd`; false with errno set when the system refuses (a full disk).
bool write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) {
      errno = ENOSPC;
      return false;
    }
    text.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
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
  return read_input_file(path, api);
}

void write_text_file(const std::string& path, const std::string& text, const char* api) {
  write_text_file_atomically(path, text, api);
}

// Note [Replacing a file]
// A file is replaced by writing a temporary beside it and renaming that over it, so that a reader
// (and a failed or interrupted write) sees the old file or the new one, never a part. The rename
// must replace only what the caller meant: a symbolic link is followed (the file it names is
// replaced, the link stays), a device or a pipe is written in place (a rename would replace the
// special file itself), a folder and a read-only file are refused.
std::string try_write_text_file_atomically(const std::string& path, const std::string& text) {
  static std::atomic<unsigned> counter{0};
  std::error_code ignored;
  const std::filesystem::path target =
      std::filesystem::is_symlink(path, ignored) ? std::filesystem::weakly_canonical(path, ignored)
                                                 : std::filesystem::path(path);
  struct stat st {};
  const bool exists = ::stat(target.c_str(), &st) == 0;
  // Each failure leaves errno saying why, for write_text_file_atomically's FileError.
  const auto failed = [](int error, std::string message) {
    errno = error;
    return message;
  };
  if (exists && S_ISDIR(st.st_mode)) return failed(EISDIR, concat("cannot write ", path, ": it is a folder"));
  if (exists && !S_ISREG(st.st_mode)) {
    const int fd = ::open(target.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return failed(errno, concat("cannot write ", path, ": ", std::strerror(errno)));
    const bool written = write_all(fd, text);
    const int error = errno;
    ::close(fd);
    return written ? std::string() : failed(error, concat("cannot write ", path, ": ", std::strerror(error)));
  }
  if (exists && (st.st_mode & S_IWUSR) == 0) {
    return failed(EACCES, concat("cannot write ", path, ": it is read-only (mode 0", std::oct,
                                 st.st_mode & 07777, ")"));
  }
  const std::string temporary = concat(target.string(), ".tmp.", ::getpid(), ".", counter.fetch_add(1));
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
                        exists ? (st.st_mode & 07777) : 0644);
  if (fd < 0) return failed(errno, concat("cannot create ", temporary, ": ", std::strerror(errno)));
  if (!write_all(fd, text)) {
    const int error = errno;
    ::close(fd);
    ::unlink(temporary.c_str());
    return failed(error, concat("cannot write ", temporary, ": ", std::strerror(error)));
  }
  if (::close(fd) != 0 || ::rename(temporary.c_str(), target.c_str()) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    return failed(error, concat("cannot move ", temporary, " to ", path, ": ", std::strerror(error)));
  }
  return {};
}

void write_text_file_atomically(const std::string& path, const std::string& text, const char* api) {
  if (std::string error = try_write_text_file_atomically(path, text); !error.empty()) {
    throw FileError(errno, api, error);
  }
}

void append_text_file(const std::string& path, const std::string& text, const char* api) {
  std::FILE* file = std::fopen(path.c_str(), "ab");
  if (file == nullptr) fail(api, "write", path, errno);
  const bool written = std::fwrite(text.data(), 1, text.size(), file) == text.size();
  const int error = errno;
  if (std::fclose(file) != 0 && written) fail(api, "write", path, errno);
  if (!written) fail(api, "write", path, error);
}

}  // namespace cudakit::detail
