#pragma once
// @brief What this machine's CUDA stack is: versions of the driver and libraries, and which
// optional features work here. Used by `cudakit info`; every field is filled without throwing.

#include <string>
#include <vector>

namespace cudakit {

// A version as "13.0", "13.0.2", or empty when the component is absent.
struct ComponentVersion {
  std::string name;     // the component, e.g. "CUDA driver"
  std::string version;  // empty: not found
  std::string detail;   // where it was found, or why not
};

// Whether one optional feature works on this machine, and why (not).
struct FeatureSupport {
  std::string name;        // the feature, e.g. "green contexts"
  bool supported = false;  // usable here
  std::string detail;  // why not, or which mechanism
};

// cudakit, the CUDA driver and runtime, cuBLAS, NVRTC, NCCL, CUPTI, cuFile, NVML. An optional
// library that is absent has an empty version and says why in `detail` (the names tried and the
// loader's error, or the entry points it lacks). Never throws for an absent component.
// @return one row per component, in a fixed order.
[[nodiscard]] std::vector<ComponentVersion> component_versions();
// Graph-node tools ids (cudaGraphNodeGetToolsId), GPUDirect Storage, nvidia-fs, green contexts,
// virtual memory management (expandable segments), IPC events.
// @return one row per feature, in a fixed order; without a GPU every device feature is unsupported,
// saying so.
[[nodiscard]] std::vector<FeatureSupport> feature_support();
// The nvidia-fs kernel module's version ("2.17.5", from /proc/driver/nvidia-fs/version), empty
// where the module is not loaded: without it cuFile cannot DMA between storage and the GPU.
// @return the module's version, or empty.
[[nodiscard]] std::string nvidia_fs_version();
// Driver version as an integer (13000 for 13.0), 0 without a driver.
// @return the version the installed driver supports (cudaDriverGetVersion), or 0.
[[nodiscard]] int driver_version() noexcept;
// Runtime version as an integer (13000 for 13.0).
// @return the version of the libcudart in use (cudaRuntimeGetVersion).
[[nodiscard]] int runtime_version() noexcept;
// 13000 -> "13.0"
// @param version a version as driver_version() gives it.
// @return "major.minor"; empty for 0 or less (absent).
[[nodiscard]] std::string format_cuda_version(int version);

}  // namespace cudakit
