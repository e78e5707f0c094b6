#pragma once
// @brief DeviceGuard: sets the current device for a scope and restores the previous one on exit
// (the C++ form of `with torch.cuda.device(i)`).

namespace cudakit {

class DeviceGuard {
 public:
  // Makes `device` current; -1 keeps the current device (but still restores it on exit).
  // @throws InvalidArgumentError for a bad ordinal.
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

  [[nodiscard]] int original_device() const noexcept { return original_; }
  [[nodiscard]] int current_device() const noexcept { return current_; }

 private:
  int original_;
  int current_;
};

}  // namespace cudakit
