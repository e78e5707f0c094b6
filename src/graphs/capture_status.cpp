#include "cudakit/graphs/capture_status.hpp"

#include "cudakit/core/error.hpp"

namespace cudakit::graphs {

bool is_stream_capturing(StreamRef stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  CUDAKIT_CHECK_CUDA(cudaStreamIsCapturing(stream.handle(), &status));
  return status != cudaStreamCaptureStatusNone;
}

bool is_current_stream_capturing() { return is_stream_capturing(current_stream()); }

}  // namespace cudakit::graphs
