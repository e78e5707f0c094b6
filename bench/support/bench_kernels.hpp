#pragma once
#include <cuda_runtime_api.h>
namespace cudakit::bench {
// <<<1, 1>>> of a kernel with no body: the launch floor.
void launch_empty(cudaStream_t stream);
// The same through cudakit::launch_kernel (trace hooks, launch check).
void launch_empty_through_cudakit(cudaStream_t stream);
}  // namespace cudakit::bench
