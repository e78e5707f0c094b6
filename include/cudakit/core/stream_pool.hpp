#pragma once
// @brief A per-device pool of streams, handed out round-robin (torch.cuda.Stream's pool behind
// get_stream_from_pool): cheap to ask for, never destroyed, shared between callers.

#include "cudakit/core/stream_ref.hpp"

namespace cudakit {

// Streams per priority class and device in the pool.
inline constexpr int kStreamsPerPool = 32;

// The next pooled stream of `device` (-1: current); high-priority streams come from a separate
// set created at the device's greatest priority. The pool is created on first use.
[[nodiscard]] StreamRef get_stream_from_pool(bool high_priority = false, int device = -1);

}  // namespace cudakit
