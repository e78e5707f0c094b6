#include "support/bench_kernels.hpp"

#include "cudakit/core/launch.cuh"

namespace cudakit::bench {
namespace {
__global__ void empty_kernel() {}
}  // namespace
void launch_empty(cudaStream_t stream) { empty_kernel<<<1, 1, 0, stream>>>(); }
void launch_empty_through_cudakit(cudaStream_t stream) {
  // The device is not asked of the runtime: StreamRef's checked constructor would add its cost.
  cudakit::launch_kernel("bench.empty", empty_kernel, {1, 1}, cudakit::StreamRef(stream, 0));
}
}  // namespace cudakit::bench
