#pragma once
// @brief Device: where a tensor's memory lives — the host (cpu) or one CUDA device.

#include <string>

namespace cudakit::tensor {

// A tensor's place (torch.device): the host, or the CUDA device of one ordinal. A value type;
// make a CUDA one with Device::cuda(), which resolves -1 to the current ordinal.
struct Device {
  // Which kind of memory: `cpu` (host memory) or `cuda` (the memory of one CUDA device).
  enum class Type { cpu, cuda };
  Type type = Type::cpu;  // host or CUDA
  int index = -1;  // the CUDA ordinal; -1 for cpu

  // The host.
  // @return Device{Type::cpu, -1}
  [[nodiscard]] static constexpr Device cpu() noexcept { return Device{Type::cpu, -1}; }
  // CUDA device `index`; -1 resolves to the calling thread's current device.
  // @param index a CUDA ordinal in [0, device count), or -1 for the current device
  // @return the device, its index resolved
  // @throws CudaError where no device exists.
  // @throws InvalidArgumentError for a bad ordinal.
  [[nodiscard]] static Device cuda(int index = -1);

  // @return whether this is the host.
  [[nodiscard]] constexpr bool is_cpu() const noexcept { return type == Type::cpu; }
  // @return whether this is a CUDA device.
  [[nodiscard]] constexpr bool is_cuda() const noexcept { return type == Type::cuda; }
  // "cpu" or "cuda:N".
  // @return the name torch prints for this device
  [[nodiscard]] std::string str() const;
  // Same type and same index.
  // @return whether the two name the same place
  friend constexpr bool operator==(Device, Device) noexcept = default;
};

}  // namespace cudakit::tensor
