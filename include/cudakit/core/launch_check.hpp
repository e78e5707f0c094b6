#pragma once
// @brief CUDAKIT_CHECK_LAUNCH(name): after a kernel launch, throws CudaError naming the kernel
// when the launch failed (bad configuration, too many resources, a sticky error from earlier
// work).

#include <source_location>

#include <cuda_runtime_api.h>

namespace cudakit::detail {
// Throws CudaError(status, "kernel launch", "of <kernel>") unless cudaGetLastError() is success.
void check_launch(const char* kernel, std::source_location location);
}  // namespace cudakit::detail

#define CUDAKIT_CHECK_LAUNCH(kernel_name) \
  ::cudakit::detail::check_launch((kernel_name), ::std::source_location::current())
