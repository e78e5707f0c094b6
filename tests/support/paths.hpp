#pragma once
// Where tests find their data and sibling binaries. Environment variables override the build-time
// paths, so a staged bundle runs on another machine (scripts/gpu-tier.sh sets them).

#include <cstdlib>
#include <filesystem>
#include <string>

namespace cudakit::testing {

inline std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}
// tests/data in the source tree (snapshots, profiler traces, recorded allocation traces).
inline std::string test_data_dir() { return env_or("CUDAKIT_TEST_DATA_DIR", CUDAKIT_TEST_DATA_DIR); }
// The folder of the running test binary, where the helper binaries are built too.
inline std::string bin_dir() { return std::filesystem::read_symlink("/proc/self/exe").parent_path().string(); }

}  // namespace cudakit::testing
