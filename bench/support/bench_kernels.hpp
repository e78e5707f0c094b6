#pragma once
#include <cuda_runtime_api.h>
namespace cudakit::bench {
// <<<1, 1>>> of a kernel with no body: the launch floor.
void launch_empty(cudaStream_t stream);
}  // namespace cudakit::bench
