#pragma once
// @brief The NCCL that cudakit loaded (torch.cuda.nccl.version()).

#include <string>

namespace cudakit::nccl {

// An NCCL release number: major.minor.patch and a pre-release suffix.
struct NcclVersion {
  int major = 0;  // 2 for NCCL 2.28.9
  int minor = 0;  // 28 for NCCL 2.28.9
  int patch = 0;  // 9 for NCCL 2.28.9
  std::string suffix;  // "" for a release, e.g. "a0" for a pre-release (from the header only)
  // @return "major.minor.patch" followed by the suffix ("2.28.9", "2.29.0a0").
  [[nodiscard]] std::string str() const;
  // Whether both are the same release.
  // @return true when every field, the suffix included, is equal.
  friend bool operator==(const NcclVersion&, const NcclVersion&) = default;
};

// ncclGetVersion's code as a version: 22809 is 2.28.9; before 2.9 it was
// major*1000 + minor*100 + patch (2804 is 2.8.4).
// @param code a version code as ncclGetVersion or NCCL_VERSION_CODE gives it
// @return the version it encodes, with an empty suffix
// @throws InvalidArgumentError for a code <= 0.
[[nodiscard]] NcclVersion version_from_code(int code);

// Whether NCCL can be used in this process. Never throws; version() says why not.
// @return true when libnccl was found and has every entry point cudakit needs.
[[nodiscard]] bool library_loaded() noexcept;
// The loaded library's version. The suffix is the header's (NCCL_SUFFIX) when the loaded library
// has the header's version; the library reports none.
// @return the version of the libnccl this process loaded
// @throws StateError naming why NCCL is not loaded.
// @throws NcclError when ncclGetVersion fails.
[[nodiscard]] NcclVersion version();

}  // namespace cudakit::nccl
