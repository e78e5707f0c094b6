#pragma once
// The calling thread's current stream per device, as in torch.cuda.current_stream.
//
// Each thread starts with the device's default (legacy null) stream current on every device.
// set_current_stream changes it for the calling thread only; StreamGuard does so for a scope.

#include "cudakit/core/stream_ref.hpp"

namespace cudakit {

// The calling thread's current stream on `device` (-1: the current device).
[[nodiscard]] StreamRef current_stream(int device = -1);
// The default (legacy null) stream of `device` (-1: the current device).
[[nodiscard]] StreamRef default_stream(int device = -1);
// Makes `stream` the calling thread's current stream on its device. The current device is not
// changed (torch's set_stream does change it; StreamGuard does both).
void set_current_stream(StreamRef stream);

}  // namespace cudakit
