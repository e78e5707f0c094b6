#include "memory/detail/read_whole_file.hpp"

#include <zlib.h>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/error.hpp"

namespace cudakit::memory::detail {

std::string read_whole_file(const std::string& path, std::string_view api) {
  // gzopen reads plain files transparently as well.
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr) {
    throw InvalidArgumentError(std::string(api), cudakit::detail::concat("cannot open '", path, "'"));
  }
  std::string text;
  char buffer[1 << 16];
  int n = 0;
  while ((n = gzread(file, buffer, sizeof buffer)) > 0) text.append(buffer, static_cast<std::size_t>(n));
  // gzerror's text lives in the gzFile, which gzclose frees: copy it first.
  int err = 0;
  const std::string message = n < 0 ? gzerror(file, &err) : "";
  gzclose(file);
  if (n < 0) {
    throw InvalidArgumentError(std::string(api),
                               cudakit::detail::concat("cannot read '", path, "': ", message));
  }
  return text;
}

std::string read_file_start(const std::string& path, std::size_t limit) noexcept {
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr) return {};
  std::string text(limit, '\0');
  const int n = gzread(file, text.data(), static_cast<unsigned>(limit));
  gzclose(file);
  text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  return text;
}

}  // namespace cudakit::memory::detail
