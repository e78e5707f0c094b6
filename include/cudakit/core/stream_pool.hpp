#pragma once
// @brief A per-device pool of streams, handed out round-robin (torch.cuda.Stream's pool behind
// get_stream_from_pool): cheap to ask for, never destroyed, shared between callers.

#include "cudakit/core/stream_ref.hpp"

namespace cudakit {

// Streams per priority class and device in the pool.
inline constexpr int kStreamsPerPool = 32;

// The next pooled stream of `device` (-1: current); high-priority streams come from a separate
// set created at the device's greatest priority. The pool is created on first use.
// The pooled streams are non-blocking and live until the process exits; they are shared, so work on
// one may be ordered after another caller's work on the same stream. Thread-safe.
// @param high_priority true for a stream of the device's greatest priority, false for the lowest
// (0).
// @param device the device; -1 means the current device.
// @return a reference to the next pooled stream, round-robin over kStreamsPerPool streams.
// @throws CudaError when no device is available or the pool's streams cannot be created.
// @throws InvalidArgumentError for a device ordinal out of range.
[[nodiscard]] StreamRef get_stream_from_pool(bool high_priority = false, int device = -1);

}  // namespace cudakit
