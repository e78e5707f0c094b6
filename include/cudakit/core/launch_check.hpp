#pragma once
// @brief CUDAKIT_CHECK_LAUNCH(name): after a kernel launch, throws CudaError naming the kernel
// when the launch failed (bad configuration, too many resources, a sticky error from earlier
// work).

#include <source_location>

#include <cuda_runtime_api.h>

namespace cudakit::detail {
// Throws CudaError(status, "kernel launch", "of <kernel>").
[[noreturn, gnu::cold]] void throw_launch_error(cudaError_t status, const char* kernel,
                                                std::source_location location);
// Throws as throw_launch_error unless cudaGetLastError() is success. Inline: it follows every
// launch, and the check is the one runtime call a bare launch's careful caller makes too.
inline void check_launch(const char* kernel, std::source_location location) {
  const cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess) [[unlikely]] throw_launch_error(status, kernel, location);
}
}  // namespace cudakit::detail

// Put directly after a `<<<...>>>` launch: reads and clears the launch's error (cudaGetLastError)
// and throws CudaError naming `kernel_name` when there was one. The kernel's own run is not waited
// for: a fault while it runs surfaces at a later synchronizing call.
#define CUDAKIT_CHECK_LAUNCH(kernel_name) \
  ::cudakit::detail::check_launch((kernel_name), ::std::source_location::current())
