#pragma once
// @brief CaptureHook: state that a captured CUDA graph must carry forward on every replay — above
// all the Philox offsets of the random generators, so that each replay draws fresh numbers. The
// graph layer calls every registered hook around capture and before each replay; the layers that
// own such state (random) register one. Both depend only on this header, so neither feature layer
// depends on the other.

#include <cstdint>
#include <vector>

#include "cudakit/core/stream_ref.hpp"

namespace cudakit {

class CaptureHook {
 public:
  virtual ~CaptureHook() = default;
  // Before the capture of work on `device` begins (the capture stream is current, not yet
  // capturing). @throws to refuse the capture.
  virtual void capture_begin(int device) = 0;
  // Just before the capture ends, on the still-capturing stream (work queued now becomes the
  // graph's last nodes): what each replay needs (0: the capture did not use this hook's state,
  // and replays need nothing).
  virtual std::uint64_t capture_end(int device, StreamRef capture_stream) = 0;
  // The capture failed or was abandoned.
  virtual void capture_abort(int device) noexcept = 0;
  // Before each replay, on the replay's stream, with capture_end()'s value (never 0).
  virtual void replay(int device, std::uint64_t token, StreamRef stream) = 0;
};

// Registers a hook for the rest of the process (hooks are never unregistered). Thread-safe.
void register_capture_hook(CaptureHook* hook);
// The registered hooks, in registration order.
[[nodiscard]] std::vector<CaptureHook*> capture_hooks();

}  // namespace cudakit
