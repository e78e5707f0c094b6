#pragma once
// @brief One process that holds a context on a GPU, as list_gpu_processes reports it.

#include <cstddef>
#include <optional>
#include <string>

namespace cudakit {

// A process with a context on a GPU, as list_gpu_processes() reports it.
struct GpuProcess {
  unsigned int pid = 0;  // as NVML reports it (See Note [NVML and process ids] in telemetry.hpp)
  // Device memory the process uses, in bytes; empty where NVML cannot say (it reports "not
  // available" without the permission to look, and under some virtualization).
  std::optional<std::size_t> used_memory;
  std::string name;  // the executable, as NVML names it, else /proc/<pid>/comm; empty if neither
  // Whether the process has libcudakit loaded (a mapping of it in /proc/<pid>/maps); empty where
  // the maps cannot be read (another user's process, without the permission to trace it).
  std::optional<bool> uses_cudakit;
};

}  // namespace cudakit
