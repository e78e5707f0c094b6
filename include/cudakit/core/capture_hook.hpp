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

// The interface a layer implements to carry state across a graph's capture and replays. Register an
// instance with register_capture_hook(); the graph layer calls it from the capturing or replaying
// thread.
class CaptureHook {
 public:
  // Virtual: implementations are used through this interface.
  virtual ~CaptureHook() = default;
  // Before the capture of work on `device` begins (the capture stream is current, not yet
  // capturing). Throwing refuses the capture: it is not begun.
  // @param device the ordinal of the capture stream's device.
  virtual void capture_begin(int device) = 0;
  // Just before the capture ends, on the still-capturing stream (work queued now becomes the
  // graph's last nodes): what each replay needs (0: the capture did not use this hook's state,
  // and replays need nothing).
  // @param device the ordinal of the capture stream's device.
  // @param capture_stream the capturing stream; work queued on it now is captured.
  // @return the token each replay() is given; 0 when replays need nothing.
  virtual std::uint64_t capture_end(int device, StreamRef capture_stream) = 0;
  // The capture failed or was abandoned: undo what capture_begin() did. Must not throw.
  // @param device the ordinal of the capture stream's device.
  virtual void capture_abort(int device) noexcept = 0;
  // Before each replay, on the replay's stream, with capture_end()'s value (never 0).
  // Work queued on `stream` here runs before the replay's graph. Throwing stops the replay
  // before its graph is launched.
  // @param device the ordinal of the replay stream's device.
  // @param token the value capture_end() returned for this graph.
  // @param stream the stream the graph is about to be launched on.
  virtual void replay(int device, std::uint64_t token, StreamRef stream) = 0;
};

// Registers a hook for the rest of the process (hooks are never unregistered). Thread-safe.
// @param hook the hook; it must live until the process exits (it is never deleted).
void register_capture_hook(CaptureHook* hook);
// The registered hooks, in registration order. Thread-safe.
// @return a copy of the registry's list.
[[nodiscard]] std::vector<CaptureHook*> capture_hooks();

}  // namespace cudakit
