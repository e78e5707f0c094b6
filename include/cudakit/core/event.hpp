#pragma once
// @brief Event: an owning, move-only CUDA event (torch.cuda.Event).
//
// Like torch's, the CUDA event is created lazily, on the first record(), on the device of the
// stream it is recorded on; until then it counts as complete, and waiting on it is a no-op.

#include <cuda_runtime_api.h>

#include "cudakit/core/optional_stream.hpp"
#include "cudakit/core/event_ref.hpp"
#include "cudakit/core/ipc_event_handle.hpp"

namespace cudakit {

struct EventFlags {
  bool enable_timing = false;  // needed for elapsed_time; costs a little on record
  bool blocking = false;       // synchronize() sleeps the thread instead of spinning
  bool interprocess = false;   // shareable through ipc_handle(); excludes enable_timing
  // torch's Event(external=True): recorded or waited on inside a graph capture, the event
  // becomes an event record or wait node of the graph (cudaEventRecordExternal /
  // cudaEventWaitExternal) instead of an ordering internal to the graph, so that a replay is
  // ordered against work outside it. Outside a capture it behaves as any event.
  bool external = false;
};

class Event : public EventRef {
 public:
  // @throws InvalidArgumentError when both enable_timing and interprocess are asked for (CUDA
  // cannot share timing events between processes).
  explicit Event(EventFlags flags = {});
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  // A moved-from Event owns nothing, and every use of it throws StateError (See Note [Moved-from
  // owners]); assigning an Event to it makes it usable again.
  Event(Event&& other) noexcept;
  Event& operator=(Event&& other) noexcept;

  [[nodiscard]] const EventFlags& flags() const noexcept { return flags_; }
  // Whether record() was called. @throws StateError for a moved-from Event.
  [[nodiscard]] bool was_recorded() const {
    check_usable("was_recorded");
    return recorded_;
  }
  // A reference to this event. @throws StateError for a moved-from Event.
  [[nodiscard]] EventRef ref() const {
    check_usable("ref");
    return *this;
  }

  // Captures the work queued so far on `stream`. The first record creates the event on the
  // stream's device; later records must use a stream of the same device.
  // @throws InvalidArgumentError when `stream` belongs to another device than the event.
  // Left out, the stream is the current device's current stream (Note [Defaulting to the
  // current stream]).
  void record(OptionalStream stream = {});
  // Makes future work on `stream` wait for the recorded work (no-op if never recorded); the host
  // does not block. Inside a capture, an external event's wait waits for its latest record at
  // each replay. @throws CudaError when the wait cannot be queued.
  void wait(OptionalStream stream = {}) const;
  // Milliseconds between this event's completion and `end`'s (both recorded, both complete).
  // @throws StateError when either event lacks enable_timing, was not recorded, or has not
  // completed yet; InvalidArgumentError when they belong to different devices.
  [[nodiscard]] float elapsed_time(const Event& end) const;

  // The handle another process passes to from_ipc_handle. Creates the event on `device` (-1:
  // current) if it was never recorded.
  // @throws StateError unless the event was made with interprocess = true.
  [[nodiscard]] IpcEventHandle ipc_handle(int device = -1);
  // Opens an event shared by another process. @throws CudaError when the handle is not a live
  // interprocess event (the message says so).
  static Event from_ipc_handle(const IpcEventHandle& handle, int device = -1);

 private:
  void create(int device);
  void destroy() noexcept;
  EventFlags flags_;
  bool recorded_ = false;
};

}  // namespace cudakit
