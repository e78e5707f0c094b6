#include "profiler/detail/json_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <utility>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/core/detail/text_file.hpp"

namespace cudakit::profiler::detail {
namespace {

[[noreturn]] void fail(const char* api, const char* what, const std::string& path, int error) {
  throw InvalidArgumentError(api, cudakit::detail::concat("cannot ", what, " ", path, ": ",
                                                          std::strerror(error)));
}

}  // namespace

std::string read_text_file(const std::string& path, const char* api) {
  int error = 0;
  std::optional<std::string> text = cudakit::detail::try_read_text_file(path, &error);
  if (!text) fail(api, "read", path, error);
  return std::move(*text);
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
