#include "cudakit/core/runtime_info.hpp"

#include <utility>

#include <cuda_runtime_api.h>

#include "cudakit/core/detail/component_registry.hpp"
#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/detail/cupti_api.hpp"
#include "cudakit/core/detail/nvml_api.hpp"
#include "core/detail/nvml_session.hpp"
#include "cudakit/core/detail/text_file.hpp"
#include "cudakit/core/device.hpp"
#include "cudakit/core/driver_api.hpp"
#include "cudakit/version.hpp"

namespace cudakit {

int driver_version() noexcept {
  int v = 0;
  if (cudaDriverGetVersion(&v) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return v;
}

int runtime_version() noexcept {
  int v = 0;
  if (cudaRuntimeGetVersion(&v) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return v;
}

std::string format_cuda_version(int version) {
  if (version <= 0) return {};
  return detail::concat(version / 1000, ".", (version % 1000) / 10);
}

std::string nvidia_fs_version() {
  std::optional<std::string> text = detail::try_read_text_file("/proc/driver/nvidia-fs/version");
  if (!text) return {};
  // "version: 2.17.5\n..." on the module's first line; the whole first line where it differs.
  std::string line = text->substr(0, text->find('\n'));
  if (const auto colon = line.find(':'); colon != std::string::npos) line = line.substr(colon + 1);
  const auto first = line.find_first_not_of(" \t");
  return first == std::string::npos ? std::string("unknown") : line.substr(first);
}

namespace {

// Core's own rows; the layers above register theirs (See Note [Components registered by their
// layer]).
const detail::ComponentRegistration cudakit_row(detail::component_rank::cudakit, []() -> ComponentVersion {
  return {"cudakit", CUDAKIT_VERSION_STRING, "this library"};
});
const detail::ComponentRegistration driver_row(detail::component_rank::driver, []() -> ComponentVersion {
  const int drv = driver_version();
  return {"CUDA driver", format_cuda_version(drv),
          drv ? "libcuda, through cudaGetDriverEntryPointByVersion" : "no CUDA driver on this machine"};
});
const detail::ComponentRegistration runtime_row(detail::component_rank::runtime, []() -> ComponentVersion {
  return {"CUDA runtime", format_cuda_version(runtime_version()), "libcudart"};
});
const detail::ComponentRegistration cupti_row(detail::component_rank::cupti, [] {
  return detail::library_row(detail::cupti_api().status);
});
const detail::ComponentRegistration nvml_row(detail::component_rank::nvml, [] {
  return detail::library_row(detail::nvml_api().status);
});

const std::string kNoGpu = "no CUDA device";

const detail::FeatureRegistration graph_tools_ids_row(
    detail::feature_rank::graph_tools_ids, [](std::vector<FeatureSupport>& out) {
      const auto& drv = detail::driver();
      out.push_back({"graph-node tools ids (cudaGraphNodeGetToolsId)", drv.cuGraphNodeGetToolsId != nullptr,
                     drv.cuGraphNodeGetToolsId ? "driver entry point present"
                     : drv.loaded ? "driver older than CUDA 13.1; annotations fall back to CUPTI ids"
                                  : "no CUDA driver"});
    });

const detail::FeatureRegistration green_contexts_row(
    detail::feature_rank::green_contexts, [](std::vector<FeatureSupport>& out) {
      const auto& drv = detail::driver();
      const bool have_gpu = is_available();
      bool green = drv.cuGreenCtxCreate != nullptr && drv.cuDevSmResourceSplitByCount != nullptr;
      out.push_back({"green contexts", green && have_gpu,
                     !drv.loaded ? "no CUDA driver"
                     : green    ? (have_gpu ? "cuGreenCtxCreate present" : kNoGpu)
                                : "driver lacks cuGreenCtxCreate (needs 12.4)"});
    });

const detail::FeatureRegistration virtual_memory_row(
    detail::feature_rank::virtual_memory, [](std::vector<FeatureSupport>& out) {
      const auto& drv = detail::driver();
      const bool have_gpu = is_available();
      int vmm = 0;
      if (have_gpu && drv.cuDeviceGetAttribute) {
        drv.cuDeviceGetAttribute(&vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 0);
      }
      out.push_back({"virtual memory (expandable segments)", vmm != 0 && drv.cuMemCreate != nullptr,
                     have_gpu ? (vmm ? "cuMemCreate/cuMemMap" : "device lacks VMM") : kNoGpu});
    });

const detail::FeatureRegistration ipc_events_row(
    detail::feature_rank::ipc_events, [](std::vector<FeatureSupport>& out) {
      const bool have_gpu = is_available();
      int ipc = 0;
      if (have_gpu) {
        cudaDeviceGetAttribute(&ipc, cudaDevAttrIpcEventSupport, 0);
        (void)cudaGetLastError();
      }
      out.push_back({"IPC events", ipc != 0, have_gpu ? (ipc ? "supported" : "not supported") : kNoGpu});
    });

const detail::FeatureRegistration telemetry_row(
    detail::feature_rank::telemetry, [](std::vector<FeatureSupport>& out) {
      // Telemetry (temperature, power, cudakit top) needs NVML initialized, not only loaded.
      const detail::NvmlSession& nvml = detail::nvml_session();
      out.push_back({"device telemetry (NVML)", nvml.api != nullptr,
                     nvml.api ? "nvmlInit_v2 succeeded" : "NVML is not available: " + nvml.reason});
    });

}  // namespace

std::vector<ComponentVersion> component_versions() { return detail::registered_components(); }

std::vector<FeatureSupport> feature_support() { return detail::registered_features(); }

}  // namespace cudakit
