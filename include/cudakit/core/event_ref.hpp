#pragma once
// @brief EventRef: a non-owning, trivially copyable reference to a CUDA event and its device.

#include <cuda_runtime_api.h>

#include "cudakit/core/stream_ref.hpp"

namespace cudakit {

// A non-owning reference to a CUDA event and its device; cheap to copy. It does not keep the event
// alive: its owner (an Event, or another library) must outlive every use. A null EventRef stands
// for an event never recorded.
class EventRef {
 public:
  // A null reference: an event never recorded, always complete.
  constexpr EventRef() noexcept = default;
  // No check is made.
  // @param handle the event; null for an event never recorded.
  // @param device the event's device ordinal.
  constexpr EventRef(cudaEvent_t handle, int device) noexcept : handle_(handle), device_(device) {}

  // These and every member below throw StateError on a moved-from Event (See Note [Moved-from
  // owners]); an EventRef made from one carries that state.
  // @return the raw cudaEvent_t; null for an event never recorded.
  [[nodiscard]] cudaEvent_t handle() const { check_usable("handle"); return handle_; }
  // @return the ordinal of the event's device (-1 for a default-made null ref).
  [[nodiscard]] int device() const { check_usable("device"); return device_; }
  // A null EventRef stands for an event never recorded: it is always complete.
  // @return true when there is no CUDA event behind the reference.
  [[nodiscard]] bool is_null() const { check_usable("is_null"); return handle_ == nullptr; }

  // True when the work captured by the last record has finished (true for a null event); the
  // host does not wait.
  // @return true when the recorded work has completed.
  // @throws CudaError when that work failed.
  [[nodiscard]] bool query() const;
  // Blocks the host until the work captured by the last record has finished (returns at once if
  // null). Spins, or sleeps for an event made with EventFlags::blocking.
  // @throws CudaError when that work failed.
  // @throws StateError under sync debug mode `error` (set_sync_debug_mode), before waiting.
  void synchronize() const;

 protected:
  // Throws StateError naming `api` when this is (a ref to) a moved-from Event.
  // @param api the member being called, for the message.
  void check_usable(const char* api) const {
    if (device_ == detail::kMovedFromDevice) [[unlikely]] detail::throw_moved_from("Event", api);
  }
  cudaEvent_t handle_ = nullptr;  // the event; null: never recorded
  int device_ = -1;  // its device; kMovedFromDevice when moved from
};

}  // namespace cudakit
