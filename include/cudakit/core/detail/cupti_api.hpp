#pragma once
// CUPTI's entry points, loaded at run time: the table CuptiHub calls through, and the version
// `cudakit info` prints. See Note [Optional library tables].

#include <cupti.h>

#include "cudakit/core/detail/library_table.hpp"

namespace cudakit::detail {

// What the hub needs; every entry exists in the CUPTI of every CUDA 13 toolkit.
#define CUDAKIT_CUPTI_FUNCTIONS(X)                 \
  X(cuptiGetVersion, required)                     \
  X(cuptiGetResultString, required)                \
  X(cuptiSubscribe, required)                      \
  X(cuptiUnsubscribe, required)                    \
  X(cuptiEnableDomain, required)                   \
  X(cuptiEnableCallback, required)                 \
  X(cuptiGetCallbackName, required)                \
  X(cuptiActivityEnable, required)                 \
  X(cuptiActivityDisable, required)                \
  X(cuptiActivityRegisterCallbacks, required)      \
  X(cuptiActivityFlushAll, required)               \
  X(cuptiActivityGetNextRecord, required)          \
  X(cuptiActivityGetNumDroppedRecords, required)   \
  X(cuptiSetThreadIdType, required)                \
  X(cuptiGetTimestamp, required)                   \
  X(cuptiGetGraphNodeId, required)                 \
  X(cuptiGetGraphId, required)                     \
  X(cuptiGetGraphExecId, required)

struct CuptiApi {
  CUDAKIT_LIBRARY_TABLE(CUDAKIT_CUPTI_FUNCTIONS)
};

// The table, loaded on first call (libcupti.so.13, libcupti.so, then where the toolkit keeps
// it outside the loader's path). Thread-safe; never throws. The version reads "API 130001"
// (cuptiGetVersion's number).
const CuptiApi& cupti_api() noexcept;

}  // namespace cudakit::detail
