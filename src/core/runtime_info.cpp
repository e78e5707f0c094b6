#include "cudakit/core/runtime_info.hpp"

#include <optional>

#include <cublas_api.h>
#include <cuda_runtime_api.h>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/device.hpp"
#include "cudakit/core/driver_api.hpp"
#include "cudakit/core/dynamic_library.hpp"
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

namespace {
// An optional library's version as `read` finds it, or where loading it failed.
template <class Read>
ComponentVersion probe_library(const char* component, std::initializer_list<const char*> names, Read read) {
  DynamicLibrary lib(names);
  const std::optional<std::string> version = lib.is_loaded() ? read(lib) : std::nullopt;
  return {component, version.value_or(""), lib.description()};
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
  using Version = std::optional<std::string>;
  out.push_back(probe_library("NVRTC", {"libnvrtc.so.13", "libnvrtc.so"}, [](const DynamicLibrary& l) -> Version {
    int a = 0, b = 0;
    auto get = l.function<int (*)(int*, int*)>("nvrtcVersion");
    if (get && get(&a, &b) == 0) return detail::concat(a, ".", b);
    return std::nullopt;
  }));
  out.push_back(probe_library("NCCL", {"libnccl.so.2", "libnccl.so"}, [](const DynamicLibrary& l) -> Version {
    int v = 0;
    auto get = l.function<int (*)(int*)>("ncclGetVersion");
    // NCCL encodes 2.28.9 as 22809.
    if (get && get(&v) == 0) return detail::concat(v / 10000, ".", (v % 10000) / 100, ".", v % 100);
    return std::nullopt;
  }));
  out.push_back(probe_library("CUPTI", {"libcupti.so.13", "libcupti.so"}, [](const DynamicLibrary& l) -> Version {
    unsigned v = 0;
    auto get = l.function<int (*)(unsigned*)>("cuptiGetVersion");
    if (get && get(&v) == 0) return detail::concat("API ", v);
    return std::nullopt;
  }));
  out.push_back(probe_library("cuFile", {"libcufile.so.0", "libcufile.so"}, [](const DynamicLibrary& l) -> Version {
    int v = 0;
    auto get = l.function<int (*)(int*)>("cuFileGetVersion");
    if (get && get(&v) == 0) return format_cuda_version(v);
    return std::nullopt;
  }));
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
    DynamicLibrary cufile({"libcufile.so.0", "libcufile.so"});
    out.push_back({"GPUDirect Storage (cuFile)", cufile.is_loaded() && have_gpu,
                   cufile.is_loaded() ? (have_gpu ? "libcufile loads; nvidia-fs not checked"
                                                  : no_gpu)
                                      : "libcufile not found"});
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
  return out;
}

}  // namespace cudakit
