#pragma once
// @brief EventRef: a non-owning, trivially copyable reference to a CUDA event and its device.

#include <cuda_runtime_api.h>

#include "cudakit/core/stream_ref.hpp"

namespace cudakit {

class EventRef {
 public:
  constexpr EventRef() noexcept = default;
  constexpr EventRef(cudaEvent_t handle, int device) noexcept : handle_(handle), device_(device) {}

  // These and every member below throw StateError on a moved-from Event (See Note [Moved-from
  // owners]); an EventRef made from one carries that state.
  [[nodiscard]] cudaEvent_t handle() const { check_usable("handle"); return handle_; }
  [[nodiscard]] int device() const { check_usable("device"); return device_; }
  // A null EventRef stands for an event never recorded: it is always complete.
  [[nodiscard]] bool is_null() const { check_usable("is_null"); return handle_ == nullptr; }

  // True when the work captured by the last record has finished (true for a null event); the
  // host does not wait. @throws CudaError when that work failed.
  [[nodiscard]] bool query() const;
  // Blocks the host until the work captured by the last record has finished (returns at once if
  // null). @throws CudaError when that work failed; StateError under sync debug mode `error`.
  void synchronize() const;

 protected:
  void check_usable(const char* api) const {
    if (device_ == detail::kMovedFromDevice) [[unlikely]] detail::throw_moved_from("Event", api);
  }
  cudaEvent_t handle_ = nullptr;
  int device_ = -1;
};

}  // namespace cudakit
