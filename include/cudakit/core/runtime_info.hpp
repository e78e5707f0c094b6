#pragma once
// @brief What this machine's CUDA stack is: versions of the driver and libraries, and which
// optional features work here. Used by `cudakit info`; every field is filled without throwing.

#include <string>
#include <vector>

namespace cudakit {

// A version as "13.0", "13.0.2", or empty when the component is absent.
struct ComponentVersion {
  std::string name;
  std::string version;  // empty: not found
  std::string detail;   // where it was found, or why not
};

struct FeatureSupport {
  std::string name;
  bool supported = false;
  std::string detail;  // why not, or which mechanism
};

// cudakit, the CUDA driver and runtime, cuBLAS, NVRTC, NCCL, CUPTI, cuFile, NVML. An optional
// library that is absent has an empty version and says why in `detail` (the names tried and the
// loader's error, or the entry points it lacks).
[[nodiscard]] std::vector<ComponentVersion> component_versions();
// Graph-node tools ids (cudaGraphNodeGetToolsId), GPUDirect Storage, nvidia-fs, green contexts,
// virtual memory management (expandable segments), IPC events.
[[nodiscard]] std::vector<FeatureSupport> feature_support();
// The nvidia-fs kernel module's version ("2.17.5", from /proc/driver/nvidia-fs/version), empty
// where the module is not loaded: without it cuFile cannot DMA between storage and the GPU.
[[nodiscard]] std::string nvidia_fs_version();
// Driver version as an integer (13000 for 13.0), 0 without a driver.
[[nodiscard]] int driver_version() noexcept;
// Runtime version as an integer (13000 for 13.0).
[[nodiscard]] int runtime_version() noexcept;
// 13000 -> "13.0"
[[nodiscard]] std::string format_cuda_version(int version);

}  // namespace cudakit
