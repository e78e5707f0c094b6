#pragma once
// One NVRTC compilation, source to cubin, timed.

#include <cstddef>
#include <string>
#include <vector>

namespace cudakit::jiterator::detail {

struct NvrtcOutput {
  std::string cubin;
  double compile_ms = 0;  // nvrtcCreateProgram + nvrtcCompileProgram
  double cubin_ms = 0;    // nvrtcGetCUBINSize + nvrtcGetCUBIN
  // Opening libnvrtc (the process's first compile only; 0 after), with the read-ahead asked
  // before it (See Note [Reading NVRTC ahead]) and the bytes it asked for.
  double open_ms = 0;
  std::size_t read_ahead_bytes = 0;
};

// The options every jiterator compilation passes (part of the cache key), for sm_<arch>.
[[nodiscard]] std::vector<std::string> nvrtc_options(int arch);
// NVRTC's version, "13.0". @throws StateError naming why NVRTC is unavailable.
[[nodiscard]] const std::string& nvrtc_version();
// Compiles `source` for sm_<arch>. @throws NvrtcError with the log (and the source) when NVRTC
// refuses it, StateError when NVRTC is unavailable.
[[nodiscard]] NvrtcOutput compile_to_cubin(const std::string& source, int arch);

}  // namespace cudakit::jiterator::detail
