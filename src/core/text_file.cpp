#include "cudakit/core/detail/text_file.hpp"

#include <cerrno>
#include <cstdio>

namespace cudakit::detail {

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

}  // namespace cudakit::detail
