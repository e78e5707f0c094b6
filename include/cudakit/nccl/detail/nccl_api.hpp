#pragma once
// NCCL's entry points, loaded at run time, for collectives. See Note [Optional library tables].

#include <nccl.h>

#include "cudakit/core/detail/library_table.hpp"

namespace cudakit::detail {

// Required entries exist in every NCCL since 2.7 (ncclSend, ncclRecv); the optional ones came
// later: ncclGetLastError with 2.13, ncclCommInitRankConfig and ncclCommFinalize with 2.14,
// ncclCommSplit with 2.18, ncclCommRegister with 2.19.
#define CUDAKIT_NCCL_FUNCTIONS(X)          \
  X(ncclGetVersion, required)              \
  X(ncclGetErrorString, required)          \
  X(ncclGetLastError, optional)            \
  X(ncclGetUniqueId, required)             \
  X(ncclCommInitRank, required)            \
  X(ncclCommInitRankConfig, optional)      \
  X(ncclCommInitAll, required)             \
  X(ncclCommDestroy, required)             \
  X(ncclCommAbort, required)               \
  X(ncclCommFinalize, optional)            \
  X(ncclCommGetAsyncError, required)       \
  X(ncclCommCount, required)               \
  X(ncclCommCuDevice, required)            \
  X(ncclCommUserRank, required)            \
  X(ncclCommSplit, optional)               \
  X(ncclCommRegister, optional)            \
  X(ncclCommDeregister, optional)          \
  X(ncclAllReduce, required)               \
  X(ncclBroadcast, required)               \
  X(ncclReduce, required)                  \
  X(ncclAllGather, required)               \
  X(ncclReduceScatter, required)           \
  X(ncclSend, required)                    \
  X(ncclRecv, required)                    \
  X(ncclGroupStart, required)              \
  X(ncclGroupEnd, required)

struct NcclApi {
  CUDAKIT_LIBRARY_TABLE(CUDAKIT_NCCL_FUNCTIONS)
};

// The table, loaded on first call (libnccl.so.2, libnccl.so). Thread-safe; never throws. The
// version reads "2.28.9".
const NcclApi& nccl_api() noexcept;

// ncclGetVersion's code as "major.minor.patch": 22809 is 2.28.9, and before 2.9 the code was
// major*1000 + minor*100 + patch (2804 is 2.8.4).
std::string nccl_version_string(int code);

}  // namespace cudakit::detail
