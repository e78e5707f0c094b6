#pragma once
// @brief Whether a stream is being captured into a CUDA graph
// (torch.cuda.is_current_stream_capturing).

#include "cudakit/core/current_stream.hpp"

namespace cudakit::graphs {

// True while `stream` is capturing, including a capture that an illegal call has invalidated
// but that has not been ended yet. @throws CudaError for an invalid stream.
[[nodiscard]] bool is_stream_capturing(StreamRef stream);
// The same for the calling thread's current stream on the current device.
[[nodiscard]] bool is_current_stream_capturing();

}  // namespace cudakit::graphs
