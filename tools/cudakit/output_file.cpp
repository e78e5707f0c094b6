#include "output_file.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <system_error>

#include "cudakit/core/detail/concat.hpp"

namespace cudakit::cli {
namespace {

[[noreturn]] void cannot_write(const std::string& path, int error) {
  throw std::runtime_error(cudakit::detail::concat("cannot write '", path, "': ", std::strerror(error)));
}

bool is_special_file(const std::string& path) {
  std::error_code ignored;
  return std::filesystem::exists(path, ignored) && !std::filesystem::is_regular_file(path, ignored);
}

}  // namespace

OutputFile::OutputFile(std::string path)
    : path_(std::move(path)),
      // The process id keeps two commands writing one output from sharing a temporary file.
      temp_(is_special_file(path_) ? path_ : cudakit::detail::concat(path_, ".", ::getpid(), ".partial")) {}

OutputFile::~OutputFile() {
  if (!committed_ && temp_ != path_) std::remove(temp_.c_str());
}

void OutputFile::write(std::string_view text) const {
  std::FILE* file = std::fopen(temp_.c_str(), "wb");
  if (file == nullptr) cannot_write(path_, errno);
  const bool written = std::fwrite(text.data(), 1, text.size(), file) == text.size();
  const int error = errno;
  if (std::fclose(file) != 0 && written) cannot_write(path_, errno);
  if (!written) cannot_write(path_, error);
}

void OutputFile::commit() {
  if (temp_ != path_ && std::rename(temp_.c_str(), path_.c_str()) != 0) cannot_write(path_, errno);
  committed_ = true;
}

}  // namespace cudakit::cli
