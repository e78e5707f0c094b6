#pragma once
// CaptureFailures: which CUDA call broke a stream capture.
//
// An illegal call made during a capture (cudaStreamSynchronize, a cudaMalloc under the global
// mode, waiting on an uncaptured event, ...) fails with a capture error and invalidates the
// capture; the capture's owner only learns of it at cudaStreamEndCapture, which says
// "invalidated" and nothing about the culprit. While captures are running, a CUPTI runtime-API
// callback (through CuptiHub) notes every call that fails with a capture error, so that the
// error thrown at the end can name it. Without CUPTI, the thread's last runtime error
// (cudaPeekAtLastError) still gives the culprit's status, if not its name.

#include <cuda_runtime_api.h>

#include <cstdint>
#include <optional>
#include <string>

namespace cudakit::graphs::detail {

struct FailedCall {
  std::string api;  // "cudaStreamSynchronize"; empty when only the status is known
  cudaError_t status = cudaSuccess;
};

// Watches while alive (one per capture; the CUPTI listener is shared).
class CaptureFailureWatch {
 public:
  CaptureFailureWatch();
  ~CaptureFailureWatch();
  CaptureFailureWatch(const CaptureFailureWatch&) = delete;
  CaptureFailureWatch& operator=(const CaptureFailureWatch&) = delete;

  // The first capture-breaking call made since this watch began (calls made on the watching
  // thread preferred), else the thread's last runtime error if it is a capture error.
  [[nodiscard]] std::optional<FailedCall> culprit() const;

 private:
  std::uint64_t start_sequence_;
};

// True for the errors CUDA reports for calls that are illegal during stream capture.
[[nodiscard]] bool is_capture_error(cudaError_t status) noexcept;

}  // namespace cudakit::graphs::detail
