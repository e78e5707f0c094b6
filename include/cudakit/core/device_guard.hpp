#pragma once
// @brief DeviceGuard: sets the current device for a scope and restores the previous one on exit
// (the C++ form of `with torch.cuda.device(i)`).

namespace cudakit {

// A scope during which a given device is the calling thread's current one; the previous device is
// made current again when the guard ends. Not copyable or movable: it belongs to its scope. Only
// the calling thread's current device changes.
class DeviceGuard {
 public:
  // Makes `device` current; -1 keeps the current device (but still restores it on exit).
  // @param device the device ordinal to make current; -1 keeps the current one.
  // @throws InvalidArgumentError for a bad ordinal.
  // @throws CudaError when no device is available or it cannot be made current.
  explicit DeviceGuard(int device);
  // Makes the original device current again, if the guard changed it. Never throws (a failure is
  // reported to stderr).
  ~DeviceGuard();
  // Not copyable: exactly one guard restores the device.
  DeviceGuard(const DeviceGuard&) = delete;
  // Not copyable: exactly one guard restores the device.
  DeviceGuard& operator=(const DeviceGuard&) = delete;

  // @return the device that was current before the guard, restored at its end.
  [[nodiscard]] int original_device() const noexcept { return original_; }
  // @return the device the guard made current.
  [[nodiscard]] int current_device() const noexcept { return current_; }

 private:
  int original_;
  int current_;
};

}  // namespace cudakit
