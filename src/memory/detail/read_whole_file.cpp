#include "memory/detail/read_whole_file.hpp"

#include <zlib.h>

#include <cstdint>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/detail/outside_input.hpp"
#include "cudakit/core/error.hpp"

namespace cudakit::memory::detail {

std::string read_whole_file(const std::string& path, std::string_view api) {
  // gzopen reads plain files transparently as well.
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr) {
    throw InvalidArgumentError(std::string(api), cudakit::detail::concat("cannot open '", path, "'"));
  }
  // Within the input limit, counted decompressed (a small gzip file can hold gigabytes), and
  // checked to its end: zlib tells a stream cut short by Z_BUF_ERROR at the end, not by a failed
  // read (See Note [Outside input]).
  const std::uint64_t limit = cudakit::detail::input_size_limit();
  std::string text;
  char buffer[1 << 16];
  int n = 0;
  while ((n = gzread(file, buffer, sizeof buffer)) > 0) {
    if (text.size() + static_cast<std::size_t>(n) > limit) {
      gzclose(file);
      throw InvalidArgumentError(std::string(api),
                                 cudakit::detail::concat(path, ": holds more than the ", limit,
                                                         " bytes this reader takes (decompressed; "
                                                         "CUDAKIT_INPUT_MAX_BYTES sets the limit)"));
    }
    text.append(buffer, static_cast<std::size_t>(n));
  }
  // gzerror's text lives in the gzFile, which gzclose frees: copy it first.
  int err = 0;
  const std::string message = gzerror(file, &err);
  gzclose(file);
  if (n < 0) {
    throw InvalidArgumentError(std::string(api),
                               cudakit::detail::concat("cannot read '", path, "': ", message));
  }
  if (err == Z_BUF_ERROR) {
    throw InvalidArgumentError(std::string(api),
                               cudakit::detail::concat(path, ": the compressed data ends early (a truncated "
                                                                "gzip file); nothing of it was read"));
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
