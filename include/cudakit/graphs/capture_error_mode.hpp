#pragma once
// @brief CaptureErrorMode: how strictly CUDA polices "potentially unsafe" API calls while a graph
// is being captured (torch.cuda.graph's capture_error_mode).

#include <cuda_runtime_api.h>

namespace cudakit::graphs {

// Which potentially unsafe CUDA calls invalidate a capture in progress (cudaStreamCaptureMode).
enum class CaptureErrorMode {
  // Any thread's unsafe call (cudaMalloc, synchronization, ...) during the capture is an error
  // and invalidates the capture: the safest choice, and torch's default.
  global,
  // Only unsafe calls made by the capturing thread are errors.
  thread_local_,
  // Unsafe calls are allowed; the caller vouches for them.
  relaxed,
};

// @param mode a mode.
// @return the runtime's cudaStreamCaptureMode for it.
[[nodiscard]] constexpr cudaStreamCaptureMode to_cuda(CaptureErrorMode mode) noexcept {
  switch (mode) {
    case CaptureErrorMode::thread_local_: return cudaStreamCaptureModeThreadLocal;
    case CaptureErrorMode::relaxed: return cudaStreamCaptureModeRelaxed;
    case CaptureErrorMode::global: break;
  }
  return cudaStreamCaptureModeGlobal;
}

}  // namespace cudakit::graphs
