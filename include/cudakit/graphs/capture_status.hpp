#pragma once
// @brief Whether a stream is being captured into a CUDA graph
// (torch.cuda.is_current_stream_capturing).

#include "cudakit/core/current_stream.hpp"

namespace cudakit::graphs {

// True while `stream` is capturing, including a capture that an illegal call has invalidated
// but that has not been ended yet. Does not synchronize.
// @param stream the stream to ask about.
// @return true while a capture on `stream` is active or invalidated but not ended.
// @throws CudaError for an invalid stream (cudaStreamIsCapturing's error).
[[nodiscard]] bool is_stream_capturing(StreamRef stream);
// The same for the calling thread's current stream on the current device.
// @return true while the current stream is capturing.
// @throws CudaError when no device is available, or as is_stream_capturing.
[[nodiscard]] bool is_current_stream_capturing();

}  // namespace cudakit::graphs
