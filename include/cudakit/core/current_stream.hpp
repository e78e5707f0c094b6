#pragma once
// @brief The calling thread's current stream per device, as in torch.cuda.current_stream.
//
// Each thread starts with the device's default (legacy null) stream current on every device.
// set_current_stream changes it for the calling thread only; StreamGuard does so for a scope.

#include "cudakit/core/stream_ref.hpp"

namespace cudakit {

// The calling thread's current stream on `device` (-1: the current device): the stream every
// cudakit operation on that device queues its work on when it is given none.
// @throws CudaError when there is no device to ask (no driver, no GPU).
// @param device the device; -1 means the current device.
// @return the current stream, the legacy default stream unless one was set.
// @throws InvalidArgumentError for a device ordinal out of range.
[[nodiscard]] StreamRef current_stream(int device = -1);
// The default (legacy null) stream of `device` (-1: the current device). @throws CudaError as
// current_stream.
// @param device the device; -1 means the current device.
// @return a reference to the device's legacy default stream.
// @throws InvalidArgumentError for a device ordinal out of range.
[[nodiscard]] StreamRef default_stream(int device = -1);
// Makes `stream` the calling thread's current stream on its device. The current device is not
// changed (torch's set_stream does change it; StreamGuard does both). Work already queued is not
// affected: later operations go to `stream`, ordered after earlier ones only if the program
// orders them (StreamRef::wait_stream).
// @throws StateError for a moved-from Stream.
// @param stream the stream to make current on its device, for the calling thread only.
void set_current_stream(StreamRef stream);

}  // namespace cudakit
