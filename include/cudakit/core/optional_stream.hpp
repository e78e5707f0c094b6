#pragma once
// @brief OptionalStream: how every cudakit operation that queues work takes its stream.
//
// Note [Defaulting to the current stream]
// Every operation that allocates, copies, launches or communicates takes `OptionalStream stream
// = {}` as its last parameter. Left out, the operation uses the calling thread's current stream
// of the device it works on (torch's rule), resolved inside the operation by stream_or_current.
// A `StreamRef stream = current_stream()` default is not used anywhere: it is evaluated at the
// call site, before the operation knows its device, so it would name the current device's stream
// for a tensor on another device, and it would need a GPU even where the work stays on the host.

#include <optional>

#include "cudakit/core/current_stream.hpp"
#include "cudakit/core/stream_ref.hpp"

namespace cudakit {

// The stream parameter of an operation that queues work: empty means the calling thread's current
// stream of the device the operation works on (see Note [Defaulting to the current stream]).
using OptionalStream = std::optional<StreamRef>;

// `stream`, or the calling thread's current stream on `device` (-1: the current device).
// @param stream the stream given by the caller, or empty.
// @param device the device whose current stream is the default; -1 means the current device.
// @return the stream to queue work on.
// @throws CudaError when `stream` is empty and no device is available.
// @throws InvalidArgumentError when `stream` is empty and `device` is out of range.
[[nodiscard]] inline StreamRef stream_or_current(const OptionalStream& stream, int device = -1) {
  return stream ? *stream : current_stream(device);
}

}  // namespace cudakit
