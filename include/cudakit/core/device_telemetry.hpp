#pragma once
// @brief Everything `cudakit top` shows of one GPU, read from NVML at one moment.

#include <optional>
#include <string>
#include <vector>

#include "cudakit/core/gpu_process.hpp"

namespace cudakit {

// A field NVML does not support on the device (power on some boards, clocks under some
// virtualization) is empty.
struct DeviceTelemetry {
  unsigned int nvml_index = 0;  // NVML's index: every GPU of the machine, whatever is visible
  int cuda_ordinal = -1;        // the CUDA ordinal in this process; -1 where CUDA does not see it
  std::string uuid;             // "GPU-..."
  std::string name;             // "NVIDIA H200"
  std::size_t memory_total = 0;  // bytes
  std::size_t memory_used = 0;   // bytes used on the device, by every process and the driver
  std::optional<unsigned int> utilization;   // percent of time a kernel ran (last sample period)
  std::optional<unsigned int> memory_usage;  // percent of time device memory was read or written
  std::optional<unsigned int> temperature;   // degrees Celsius
  std::optional<unsigned int> power_draw;    // milliwatts
  std::optional<unsigned int> power_limit;   // milliwatts (the power management limit)
  std::optional<unsigned int> clock_rate;    // SM clock, MHz
  std::optional<unsigned int> clock_rate_max;  // highest SM clock, MHz
  std::optional<unsigned int> memory_clock_rate;  // MHz
  std::vector<GpuProcess> processes;  // compute and graphics processes, each pid once
};

}  // namespace cudakit
