#include "cudakit/core/runtime_info.hpp"

#include <utility>

#include <cublas_api.h>
#include <cuda_runtime_api.h>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/detail/cufile_api.hpp"
#include "cudakit/core/detail/cupti_api.hpp"
#include "cudakit/core/detail/nccl_api.hpp"
#include "cudakit/core/detail/nvml_api.hpp"
#include "cudakit/core/detail/nvrtc_api.hpp"
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
// An optional library's row: its version, and the file that loaded or why none did.
ComponentVersion library_row(const detail::LibraryStatus& status) {
  std::string version = status.version;
  if (status.loaded && version.empty()) version = "unknown";
  return {status.library, std::move(version), status.loaded ? status.file : status.reason};
}
}  // namespace

std::vector<ComponentVersion> component_versions() {
  std::vector<ComponentVersion> out;
  out.push_back({"cudakit", CUDAKIT_VERSION_STRING, "this library"});
  const int drv = driver_version();
  out.push_back({"CUDA driver", format_cuda_version(drv),
                 drv ? "libcuda, through cudaGetDriverEntryPointByVersion"
                     : "no CUDA driver on this machine"});
  out.push_back({"CUDA runtime", format_cuda_version(runtime_version()), "libcudart"});
  int major = 0, minor = 0, patch = 0;
  cublasGetProperty(MAJOR_VERSION, &major);
  cublasGetProperty(MINOR_VERSION, &minor);
  cublasGetProperty(PATCH_LEVEL, &patch);
  out.push_back({"cuBLAS", detail::concat(major, ".", minor, ".", patch), "libcublas"});
  out.push_back(library_row(detail::nvrtc_api().status));
  out.push_back(library_row(detail::nccl_api().status));
  out.push_back(library_row(detail::cupti_api().status));
  out.push_back(library_row(detail::cufile_api().status));
  out.push_back(library_row(detail::nvml_api().status));
  return out;
}

std::vector<FeatureSupport> feature_support() {
  std::vector<FeatureSupport> out;
  const auto& drv = detail::driver();
  const bool have_gpu = is_available();
  const std::string no_gpu = "no CUDA device";
  out.push_back({"graph-node tools ids (cudaGraphNodeGetToolsId)",
                 drv.cuGraphNodeGetToolsId != nullptr,
                 drv.cuGraphNodeGetToolsId ? "driver entry point present"
                 : drv.loaded ? "driver older than CUDA 13.1; annotations fall back to CUPTI ids"
                              : "no CUDA driver"});
  {
    const detail::LibraryStatus& cufile = detail::cufile_api().status;
    const std::string nvfs = nvidia_fs_version();
    out.push_back({"GPUDirect Storage (cuFile)", cufile.loaded && have_gpu,
                   !cufile.loaded ? cufile.reason
                   : have_gpu     ? (nvfs.empty() ? "libcufile loads; nvidia-fs absent: cuFile can "
                                                    "only run in compatibility mode"
                                                  : "libcufile loads; nvidia-fs " + nvfs)
                                  : no_gpu});
    out.push_back({"nvidia-fs (GPUDirect Storage DMA)", !nvfs.empty(),
                   nvfs.empty() ? "module not loaded (no /proc/driver/nvidia-fs/version): cudakit's "
                                  "O_DIRECT engine serves GdsFile"
                                : "version " + nvfs});
  }
  {
    bool green = drv.cuGreenCtxCreate != nullptr && drv.cuDevSmResourceSplitByCount != nullptr;
    out.push_back({"green contexts", green && have_gpu,
                   !drv.loaded ? "no CUDA driver"
                   : green    ? (have_gpu ? "cuGreenCtxCreate present" : no_gpu)
                              : "driver lacks cuGreenCtxCreate (needs 12.4)"});
  }
  {
    int vmm = 0;
    if (have_gpu && drv.cuDeviceGetAttribute) {
      drv.cuDeviceGetAttribute(&vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 0);
    }
    out.push_back({"virtual memory (expandable segments)", vmm != 0 && drv.cuMemCreate != nullptr,
                   have_gpu ? (vmm ? "cuMemCreate/cuMemMap" : "device lacks VMM") : no_gpu});
  }
  {
    int ipc = 0;
    if (have_gpu) {
      cudaDeviceGetAttribute(&ipc, cudaDevAttrIpcEventSupport, 0);
      (void)cudaGetLastError();
    }
    out.push_back({"IPC events", ipc != 0, have_gpu ? (ipc ? "supported" : "not supported") : no_gpu});
  }
  {
    // Telemetry (temperature, power, cudakit top) needs NVML initialized, not only loaded.
    const detail::NvmlSession& nvml = detail::nvml_session();
    out.push_back({"device telemetry (NVML)", nvml.api != nullptr,
                   nvml.api ? "nvmlInit_v2 succeeded" : "NVML is not available: " + nvml.reason});
  }
  return out;
}

}  // namespace cudakit
