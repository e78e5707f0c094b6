#include "cudakit/profiler/cuda_profiler_api.hpp"

#include <cuda_profiler_api.h>

#include "cudakit/core/error.hpp"

namespace cudakit::profiler {

void start() { CUDAKIT_CHECK_CUDA(cudaProfilerStart()); }
void stop() { CUDAKIT_CHECK_CUDA(cudaProfilerStop()); }

ProfileScope::ProfileScope() { start(); }
ProfileScope::~ProfileScope() { CUDAKIT_WARN_CUDA(cudaProfilerStop()); }

}  // namespace cudakit::profiler
