#include "profiler/detail/json_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/error.hpp"

namespace cudakit::profiler::detail {
namespace {

[[noreturn]] void fail(const char* api, const char* what, const std::string& path, int error) {
  throw InvalidArgumentError(api, cudakit::detail::concat("cannot ", what, " ", path, ": ",
                                                          std::strerror(error)));
}

}  // namespace

std::string read_text_file(const std::string& path, const char* api) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) fail(api, "read", path, errno);
  std::string text;
  char chunk[1 << 16];
  std::size_t n = 0;
  while ((n = std::fread(chunk, 1, sizeof chunk, file)) > 0) text.append(chunk, n);
  const bool failed = std::ferror(file) != 0;
  const int error = errno;
  std::fclose(file);
  if (failed) fail(api, "read", path, error);
  return text;
}

void write_text_file(const std::string& path, const std::string& text, const char* api) {
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) fail(api, "write", path, errno);
  const bool written = std::fwrite(text.data(), 1, text.size(), file) == text.size();
  const int error = errno;
  if (std::fclose(file) != 0 && written) fail(api, "write", path, errno);
  if (!written) fail(api, "write", path, error);
}

}  // namespace cudakit::profiler::detail
