#pragma once
// @brief Device: where a tensor's memory lives — the host (cpu) or one CUDA device.

#include <string>

namespace cudakit::tensor {

struct Device {
  enum class Type { cpu, cuda };
  Type type = Type::cpu;
  int index = -1;  // the CUDA ordinal; -1 for cpu

  [[nodiscard]] static constexpr Device cpu() noexcept { return Device{Type::cpu, -1}; }
  // CUDA device `index`; -1 resolves to the calling thread's current device.
  // @throws CudaError where no device exists, InvalidArgumentError for a bad ordinal.
  [[nodiscard]] static Device cuda(int index = -1);

  [[nodiscard]] constexpr bool is_cpu() const noexcept { return type == Type::cpu; }
  [[nodiscard]] constexpr bool is_cuda() const noexcept { return type == Type::cuda; }
  // "cpu" or "cuda:N".
  [[nodiscard]] std::string str() const;
  friend constexpr bool operator==(Device, Device) noexcept = default;
};

}  // namespace cudakit::tensor
