#pragma once
// NVRTC's entry points, loaded at run time, for runtime-compiled kernels.
// See Note [Optional library tables].

#include <nvrtc.h>

#include "cudakit/core/detail/library_table.hpp"

namespace cudakit::detail {

// Every entry exists in the NVRTC of every CUDA 13 toolkit.
#define CUDAKIT_NVRTC_FUNCTIONS(X)       \
  X(nvrtcVersion, required)              \
  X(nvrtcGetErrorString, required)       \
  X(nvrtcCreateProgram, required)        \
  X(nvrtcDestroyProgram, required)       \
  X(nvrtcCompileProgram, required)       \
  X(nvrtcGetProgramLogSize, required)    \
  X(nvrtcGetProgramLog, required)        \
  X(nvrtcGetCUBINSize, required)         \
  X(nvrtcGetCUBIN, required)             \
  X(nvrtcGetPTXSize, required)           \
  X(nvrtcGetPTX, required)               \
  X(nvrtcAddNameExpression, required)    \
  X(nvrtcGetLoweredName, required)

struct NvrtcApi {
  CUDAKIT_LIBRARY_TABLE(CUDAKIT_NVRTC_FUNCTIONS)
};

// The table, loaded on first call (libnvrtc.so.13, libnvrtc.so). Thread-safe; never throws.
// The version reads "13.0" (nvrtcVersion's major.minor).
const NvrtcApi& nvrtc_api() noexcept;

}  // namespace cudakit::detail
