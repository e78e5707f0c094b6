#pragma once
// @brief The CUDA driver API, reached through the runtime's entry-point query. See Note [Driver entry points].

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <string>

namespace cudakit::detail {

// Note [Driver entry points]
// cudakit never links libcuda: a binary must start, and say "no CUDA device", on a machine with
// no driver at all. The runtime (libcudart) loads the driver itself when it is first used, and
// cudaGetDriverEntryPointByVersion hands out driver functions by name and by the ABI version we
// were written against. Each pointer below is pinned to the version whose signature we call; a
// symbol the installed driver lacks stays null, and the feature that needs it reports itself
// unavailable (e.g. graph-node tools ids need a 13.1 driver). The table is filled once, on first
// use, and is immutable afterwards, so reading it needs no lock.

// The SM-resource entries are asked for at 13.0, the ABI whose CUdevSmResource carries
// minSmPartitionSize and smCoscheduledAlignment (older drivers answer with their 12.4 entry).
// cuGraphNodeGetToolsId arrived with CUDA 13.1; the 13.0 headers do not declare it.
using PFN_GraphNodeGetToolsId = CUresult (*)(CUgraphNode, unsigned long long*);
// cuStreamGetCtx's 12.5 form, which also names the stream's green context; cuda.h declares it as
// cuStreamGetCtx_v2, but the entry point is asked for by its base name.
using PFN_StreamGetCtxWithGreen = CUresult (*)(CUstream, CUcontext*, CUgreenCtx*);

// The driver functions cudakit calls, each with the ABI version (CUDA x 1000 + minor x 10) whose
// signature it is called with; X(name, version) is applied to each, to declare the table's pointers
// and to fill them.
#define CUDAKIT_DRIVER_FUNCTIONS(X)               \
  X(cuGetErrorString, 12000)                      \
  X(cuGetErrorName, 12000)                        \
  X(cuDriverGetVersion, 12000)                    \
  X(cuDeviceGet, 12000)                           \
  X(cuDeviceGetAttribute, 12000)                  \
  X(cuCtxGetCurrent, 12000)                       \
  X(cuCtxSetCurrent, 12000)                       \
  X(cuDevicePrimaryCtxRetain, 12000)              \
  X(cuDevicePrimaryCtxRelease, 12000)             \
  X(cuDevicePrimaryCtxGetState, 12000)            \
  X(cuStreamGetId, 12000)                         \
  X(cuMemGetAllocationGranularity, 12000)         \
  X(cuMemCreate, 12000)                           \
  X(cuMemRelease, 12000)                          \
  X(cuMemAddressReserve, 12000)                   \
  X(cuMemAddressFree, 12000)                      \
  X(cuMemMap, 12000)                              \
  X(cuMemUnmap, 12000)                            \
  X(cuMemSetAccess, 12000)                        \
  X(cuMemExportToShareableHandle, 12000)          \
  X(cuMemImportFromShareableHandle, 12000)        \
  X(cuMemRetainAllocationHandle, 12000)           \
  X(cuDeviceGetDevResource, 13000)                \
  X(cuDevSmResourceSplitByCount, 13000)           \
  X(cuDevResourceGenerateDesc, 12040)             \
  X(cuGreenCtxCreate, 12040)                      \
  X(cuGreenCtxDestroy, 12040)                     \
  X(cuGreenCtxStreamCreate, 12050)                \
  X(cuCtxFromGreenCtx, 12040)                     \
  X(cuStreamGetCtx, 12000)                        \
  X(cuModuleLoadData, 12000)                      \
  X(cuModuleGetFunction, 12000)                   \
  X(cuLibraryLoadData, 12000)                     \
  X(cuLibraryUnload, 12000)                       \
  X(cuLibraryGetKernel, 12000)                    \
  X(cuKernelGetFunction, 12000)                   \
  X(cuLaunchKernel, 12000)                        \
  X(cuGraphCreate, 12000)                         \
  X(cuGraphAddKernelNode, 12000)                  \
  X(cuGraphInstantiateWithFlags, 12000)           \
  X(cuGraphExecKernelNodeSetParams, 12000)        \
  X(cuGraphLaunch, 12000)                         \
  X(cuGraphExecDestroy, 12000)                    \
  X(cuGraphDestroy, 12000)                        \
  X(cuStreamIsCapturing, 12000)                   \
  X(cuStreamQuery, 12000)                         \
  X(cuThreadExchangeStreamCaptureMode, 12000)     \
  X(cuFuncLoad, 12040)                             \
  X(cuGreenCtxGetDevResource, 13000)              \
  X(cuCtxGetDevResource, 13000)

struct DriverApi {
// One pointer of the table, typed as cuda.h declares `name`; null until filled, and null for good
// when the driver lacks it.
#define CUDAKIT_DECLARE_DRIVER_POINTER(name, version) decltype(&::name) name = nullptr;
  CUDAKIT_DRIVER_FUNCTIONS(CUDAKIT_DECLARE_DRIVER_POINTER)
#undef CUDAKIT_DECLARE_DRIVER_POINTER
  PFN_GraphNodeGetToolsId cuGraphNodeGetToolsId = nullptr;
  PFN_StreamGetCtxWithGreen cuStreamGetCtxWithGreen = nullptr;

  // False when no driver could be reached (no GPU stack on this machine).
  bool loaded = false;
  // The runtime's error when the table could not be filled; cudaSuccess otherwise.
  cudaError_t load_error = cudaSuccess;
};

// The table, filled on first call (thread-safe). Never throws.
const DriverApi& driver() noexcept;

// The same table, but throws CudaError when no driver is present, or when `function` is null
// (`name` says which symbol, for the message).
const DriverApi& require_driver(const void* function, const char* name);

// "CUDA_ERROR_OUT_OF_MEMORY: out of memory", or "unknown CUresult N" without a driver.
std::string driver_error_string(int cu_result);

}  // namespace cudakit::detail

// Calls a driver function through the table, throwing CudaError if it is missing or fails.
#define CUDAKIT_DRIVER_CALL(name, ...)                                                  \
  CUDAKIT_CHECK_DRIVER(                                                                 \
      ::cudakit::detail::require_driver(                                                \
          reinterpret_cast<const void*>(::cudakit::detail::driver().name), #name)       \
          .name(__VA_ARGS__))
