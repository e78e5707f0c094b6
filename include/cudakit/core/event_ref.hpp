#pragma once
// EventRef: a non-owning, trivially copyable reference to a CUDA event and its device.

#include <cuda_runtime_api.h>

namespace cudakit {

class StreamRef;

class EventRef {
 public:
  constexpr EventRef() noexcept = default;
  constexpr EventRef(cudaEvent_t handle, int device) noexcept : handle_(handle), device_(device) {}

  [[nodiscard]] cudaEvent_t handle() const noexcept { return handle_; }
  [[nodiscard]] int device() const noexcept { return device_; }
  // A null EventRef stands for an event never recorded: it is always complete.
  [[nodiscard]] bool is_null() const noexcept { return handle_ == nullptr; }

  // True when the work captured by the last record has finished (true for a null event).
  [[nodiscard]] bool query() const;
  // Blocks until the work captured by the last record has finished (returns at once if null).
  void synchronize() const;

 protected:
  cudaEvent_t handle_ = nullptr;
  int device_ = -1;
};

}  // namespace cudakit
