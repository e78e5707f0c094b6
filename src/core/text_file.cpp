#include "cudakit/core/detail/text_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <unistd.h>

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

void write_text_file_atomically(const std::string& path, const std::string& text, const char* api) {
  const std::string temporary = concat(path, ".tmp.", ::getpid());
  write_text_file(temporary, text, api);
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const int error = errno;
    std::remove(temporary.c_str());
    fail(api, "write", path, error);
  }
}

void append_text_file(const std::string& path, const std::string& text, const char* api) {
  write_with_mode(path, text, api, "ab");
}

}  // namespace cudakit::detail
