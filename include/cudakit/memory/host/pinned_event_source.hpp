#pragma once
// @brief PinnedEventSource: the events PinnedHostAllocator records to learn when the GPU has finished
// with a deallocated block. The default one makes CUDA events; host-tier tests substitute events
// that they complete by hand.

#include <memory>

#include "cudakit/core/stream_ref.hpp"

namespace cudakit::memory {

// An opaque event: a cudaEvent_t for the CUDA source, whatever a test source chooses otherwise.
using PinnedEventHandle = void*;

// The allocator keeps created events in a per-device pool and re-records them: create() and
// destroy() are rare, record() and query() are frequent. Calls for one event never overlap: the
// allocator serializes them.
class PinnedEventSource {
 public:
  // Events not destroyed are the implementation's to clean up.
  virtual ~PinnedEventSource() = default;
  // A new event that can be recorded on streams of `device`.
  // @param device the device ordinal.
  // @return the event.
  // @throws CudaError (the CUDA source) when the event cannot be created.
  [[nodiscard]] virtual PinnedEventHandle create(int device) = 0;
  // Captures the work queued so far on `stream`, whose device is the one the event was made for.
  // Stream-ordered: the record is queued on `stream` and the call returns at once.
  // @param event an event from create().
  // @param stream the stream whose work to capture.
  // @throws CudaError (the CUDA source) when the record cannot be queued.
  virtual void record(PinnedEventHandle event, StreamRef stream) = 0;
  // True when the work captured by the last record() has finished. Must not block.
  // @param event an event from create().
  // @return whether that work has finished.
  // @throws CudaError (the CUDA source) when the query reports an error.
  [[nodiscard]] virtual bool query(PinnedEventHandle event) = 0;
  // Blocks until the work captured by the last record() has finished.
  // @param event an event from create().
  // @throws CudaError (the CUDA source) when queued work failed.
  virtual void synchronize(PinnedEventHandle event) = 0;
  // Destroys an event from create(); never used again. Must not throw.
  // @param event the event.
  virtual void destroy(PinnedEventHandle event) noexcept = 0;
};

// cudaEvents made with cudaEventDisableTiming (recording them is cheaper).
// Nothing touches the CUDA runtime until the first create().
// @return a new source; record() switches to the stream's device for the call.
[[nodiscard]] std::unique_ptr<PinnedEventSource> make_cuda_pinned_event_source();

}  // namespace cudakit::memory
