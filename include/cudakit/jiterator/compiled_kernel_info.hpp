#pragma once
// @brief CompiledKernelInfo: what producing one runtime-compiled kernel took, for tests,
// benchmarks and bug reports.

#include <cstddef>
#include <cstdint>
#include <string>

namespace cudakit::jiterator {

// Where a runtime-compiled kernel came from.
enum class KernelOrigin : std::uint8_t {
  memory,    // already compiled in this process
  disk,      // read from the disk cache
  compiled,  // compiled by NVRTC now
};
// "memory", "disk" or "compiled".
// @param origin the origin
// @return its name (a static string)
[[nodiscard]] const char* to_string(KernelOrigin origin) noexcept;

// What producing one kernel took: where it came from, for which architecture, its size and the
// time of each step (JitFunction::compile, JitReduction::compile).
struct CompiledKernelInfo {
  KernelOrigin origin = KernelOrigin::compiled;  // which cache held it, or that NVRTC made it now
  int arch = 0;                 // 90 for sm_90
  std::size_t cubin_bytes = 0;  // the cubin's size in bytes
  // Set when origin is `compiled` (milliseconds of this process's first compile):
  double compile_ms = 0;        // nvrtcCompileProgram: front end, optimizer and code generation
  double cubin_ms = 0;          // nvrtcGetCUBINSize + nvrtcGetCUBIN
  double disk_ms = 0;           // reading and verifying (origin disk) or writing the disk entry
  double load_ms = 0;           // the module's load into the first device's context (0 before it)
  // Opening libnvrtc, paid by the process's first compile alone (0 for the others), and the bytes
  // of libnvrtc and its builtins it asked the kernel to read ahead (0 where the page cache held
  // them): the part of a machine's first compile that is the disk's.
  double nvrtc_open_ms = 0;
  std::size_t nvrtc_read_ahead_bytes = 0;  // bytes of libnvrtc read ahead (see above)
  std::string cache_key;        // what the caches file it under
};

}  // namespace cudakit::jiterator
