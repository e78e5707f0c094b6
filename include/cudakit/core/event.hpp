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

// How an Event is created (cudaEventCreateWithFlags); fixed for the event's life.
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

// An owning, move-only CUDA event, created lazily on its first record() (torch.cuda.Event). Use it
// to order streams against each other (wait()), to wait on the host (synchronize()), to time work
// (elapsed_time()) and to share completion with another process (ipc_handle()). Not
// thread-safe while it is recorded: query and wait from several threads only while none records.
class Event : public EventRef {
 public:
  // No CUDA call is made here (the event is created by its first record or ipc_handle()).
  // @param flags how the event is to be created.
  // @throws InvalidArgumentError when both enable_timing and interprocess are asked for (CUDA
  // cannot share timing events between processes).
  explicit Event(EventFlags flags = {});
  // Destroys the CUDA event, if one was created; work that records it still completes. Never
  // throws.
  ~Event();
  // Not copyable: an Event has one owner.
  Event(const Event&) = delete;
  // Not copyable: an Event has one owner.
  Event& operator=(const Event&) = delete;
  // A moved-from Event owns nothing, and every use of it throws StateError (See Note [Moved-from
  // owners]); assigning an Event to it makes it usable again.
  // @param other the event to take; it is moved-from afterwards.
  Event(Event&& other) noexcept;
  // Destroys the event this one owned, then takes `other`'s handle, flags and recorded state.
  // @param other the event to take; it is moved-from afterwards.
  // @return this event.
  Event& operator=(Event&& other) noexcept;

  // @return the flags the event was made with.
  [[nodiscard]] const EventFlags& flags() const noexcept { return flags_; }
  // Whether record() was called. @throws StateError for a moved-from Event.
  // @return true once record() has been called (or for an event opened from an IPC handle).
  [[nodiscard]] bool was_recorded() const {
    check_usable("was_recorded");
    return recorded_;
  }
  // A reference to this event. @throws StateError for a moved-from Event.
  // @return a non-owning reference, valid while this Event lives; a null ref before the first
  // record.
  [[nodiscard]] EventRef ref() const {
    check_usable("ref");
    return *this;
  }

  // Captures the work queued so far on `stream`. The first record creates the event on the
  // stream's device; later records must use a stream of the same device.
  // Left out, the stream is the current device's current stream (Note [Defaulting to the
  // current stream]).
  // Stream-ordered on `stream`: the event completes when the work queued there before the
  // record has; returns at once. Inside a capture, the record becomes part of the graph (an
  // event record node when `external` is set).
  // @param stream the stream whose work so far the event captures; the current stream when
  //        omitted.
  // @throws InvalidArgumentError when `stream` belongs to another device than the event.
  // @throws StateError for a moved-from Event or Stream.
  // @throws CudaError when the event cannot be created or recorded.
  void record(OptionalStream stream = {});
  // Makes future work on `stream` wait for the recorded work (no-op if never recorded); the host
  // does not block. Inside a capture, an external event's wait waits for its latest record at
  // each replay.
  // @param stream the stream whose later work waits; the current stream when omitted.
  // @throws CudaError when the wait cannot be queued.
  // @throws StateError for a moved-from Event or Stream.
  void wait(OptionalStream stream = {}) const;
  // Milliseconds between this event's completion and `end`'s (both recorded, both complete).
  // Does not block: call end.synchronize() first.
  // @param end the later event, recorded after this one.
  // @return the elapsed time in milliseconds (about half a microsecond of resolution).
  // @throws StateError when either event lacks enable_timing, was not recorded, or has not
  //         completed yet.
  // @throws InvalidArgumentError when they belong to different devices.
  // @throws CudaError when the recorded work failed.
  [[nodiscard]] float elapsed_time(const Event& end) const;

  // The handle another process passes to from_ipc_handle. Creates the event on `device` (-1:
  // current) if it was never recorded.
  // @param device the device to create the event on when it has not been; -1 means the current
  //        device. Ignored once the event exists.
  // @return the event's interprocess handle.
  // @throws StateError unless the event was made with interprocess = true.
  // @throws CudaError when the event cannot be created or its handle cannot be taken.
  [[nodiscard]] IpcEventHandle ipc_handle(int device = -1);
  // Opens an event shared by another process. The result counts as recorded: wait() and
  // synchronize() order against the other process's latest record of it.
  // @param handle the handle from the other process's ipc_handle().
  // @param device the device to open it on; -1 means the current device.
  // @return an interprocess Event owning the opened handle.
  // @throws CudaError when the handle is not a live interprocess event (the message says so).
  // @throws InvalidArgumentError for a device ordinal out of range.
  static Event from_ipc_handle(const IpcEventHandle& handle, int device = -1);

 private:
  void create(int device);
  void destroy() noexcept;
  EventFlags flags_;
  bool recorded_ = false;
};

}  // namespace cudakit
