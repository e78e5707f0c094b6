#pragma once
// @brief The NCCL that cudakit loaded (torch.cuda.nccl.version()).

#include <string>

namespace cudakit::nccl {

struct NcclVersion {
  int major = 0;
  int minor = 0;
  int patch = 0;
  std::string suffix;  // "" for a release, e.g. "a0" for a pre-release (from the header only)
  [[nodiscard]] std::string str() const;  // "2.28.9" (+ suffix)
  friend bool operator==(const NcclVersion&, const NcclVersion&) = default;
};

// ncclGetVersion's code as a version: 22809 is 2.28.9; before 2.9 it was
// major*1000 + minor*100 + patch (2804 is 2.8.4). @throws InvalidArgumentError for a code <= 0.
[[nodiscard]] NcclVersion version_from_code(int code);

// True when libnccl was found and has every entry point cudakit needs.
[[nodiscard]] bool library_loaded() noexcept;
// The loaded library's version. The suffix is the header's (NCCL_SUFFIX) when the loaded library
// has the header's version; the library reports none. @throws StateError naming why NCCL is not
// loaded.
[[nodiscard]] NcclVersion version();

}  // namespace cudakit::nccl
