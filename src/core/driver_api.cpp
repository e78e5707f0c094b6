#include "cudakit/core/driver_api.hpp"

#include <cuda_runtime_api.h>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/error.hpp"

namespace cudakit::detail {
namespace {

template <class Function>
void load_symbol(const char* name, unsigned version, Function& slot) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  if (cudaGetDriverEntryPointByVersion(name, &fn, version, cudaEnableDefault, &found) ==
          cudaSuccess &&
      found == cudaDriverEntryPointSuccess) {
    slot = reinterpret_cast<Function>(fn);
  }
  (void)cudaGetLastError();
}

DriverApi load_driver_api() noexcept {
  DriverApi api;
  int driver_version = 0;
  // Asking the runtime for the driver's version makes it try to load libcuda: with no driver
  // the answer is 0 (and cudaErrorInsufficientDriver is reported by later calls).
  cudaError_t status = cudaDriverGetVersion(&driver_version);
  if (status != cudaSuccess || driver_version == 0) {
    api.load_error = status != cudaSuccess ? status : cudaErrorInsufficientDriver;
    (void)cudaGetLastError();
    return api;
  }
#define CUDAKIT_LOAD_DRIVER_POINTER(name, version) load_symbol(#name, version, api.name);
  CUDAKIT_DRIVER_FUNCTIONS(CUDAKIT_LOAD_DRIVER_POINTER)
#undef CUDAKIT_LOAD_DRIVER_POINTER
  load_symbol("cuGraphNodeGetToolsId", 13010, api.cuGraphNodeGetToolsId);
  load_symbol("cuStreamGetCtx", 12050, api.cuStreamGetCtxWithGreen);
  api.loaded = api.cuGetErrorString != nullptr;
  if (!api.loaded) api.load_error = cudaErrorInsufficientDriver;
  return api;
}

}  // namespace

const DriverApi& driver() noexcept {
  static const DriverApi api = load_driver_api();
  return api;
}

const DriverApi& require_driver(const void* function, const char* name) {
  const DriverApi& api = driver();
  if (!api.loaded) {
    throw CudaError(api.load_error, name, "the CUDA driver could not be loaded");
  }
  if (function == nullptr) {
    throw CudaError(cudaErrorNotSupported, name,
                    concat("the installed CUDA driver does not provide ", name));
  }
  return api;
}

std::string driver_error_string(int cu_result) {
  const DriverApi& api = driver();
  const char* name = nullptr;
  const char* text = nullptr;
  if (api.cuGetErrorName) api.cuGetErrorName(static_cast<CUresult>(cu_result), &name);
  if (api.cuGetErrorString) api.cuGetErrorString(static_cast<CUresult>(cu_result), &text);
  if (!name || !text) return concat("unknown CUresult ", cu_result);
  return concat(name, ": ", text);
}

}  // namespace cudakit::detail
