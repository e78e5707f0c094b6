#pragma once
// RelaxedCaptureMode: the calling thread in cudaStreamCaptureModeRelaxed for a scope, so that
// calls a global-mode capture forbids ("potentially unsafe": module loading, cudaMalloc, device
// queries) are allowed while that capture runs in this or another thread. They queue no work on
// the capturing stream, so the capture is not changed by them.

#include <cuda_runtime_api.h>

#include "cudakit/core/error.hpp"

namespace cudakit::detail {

class RelaxedCaptureMode {
 public:
  RelaxedCaptureMode() { CUDAKIT_CHECK_CUDA(cudaThreadExchangeStreamCaptureMode(&mode_)); }
  ~RelaxedCaptureMode() { CUDAKIT_WARN_CUDA(cudaThreadExchangeStreamCaptureMode(&mode_)); }
  RelaxedCaptureMode(const RelaxedCaptureMode&) = delete;
  RelaxedCaptureMode& operator=(const RelaxedCaptureMode&) = delete;

 private:
  cudaStreamCaptureMode mode_ = cudaStreamCaptureModeRelaxed;
};

}  // namespace cudakit::detail
