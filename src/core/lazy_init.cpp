#include "cudakit/core/lazy_init.hpp"

#include <cuda_runtime_api.h>

#include "cudakit/core/device.hpp"
#include "cudakit/core/driver_api.hpp"
#include "cudakit/core/error.hpp"

namespace cudakit {

void init() {
  const int device = detail::resolve_device(-1, "init");
  // cudaInitDevice creates the device's primary context (once; later calls find it made), and
  // cudaSetDevice, since CUDA 12, makes it the thread's current context: no work is queued.
  CUDAKIT_CHECK_CUDA(cudaInitDevice(device, 0, 0));
  CUDAKIT_CHECK_CUDA(cudaSetDevice(device));
}

bool is_initialized() noexcept {
  if (!is_available()) return false;
  const detail::DriverApi& driver = detail::driver();
  if (!driver.loaded || driver.cuDeviceGet == nullptr || driver.cuDevicePrimaryCtxGetState == nullptr)
    return false;
  for (int ordinal = 0; ordinal < device_count(); ++ordinal) {
    CUdevice device = 0;
    unsigned int flags = 0;
    int active = 0;
    // In a forked child of an initialized process these fail (CUDA_ERROR_NOT_INITIALIZED).
    if (driver.cuDeviceGet(&device, ordinal) != CUDA_SUCCESS) return false;
    if (driver.cuDevicePrimaryCtxGetState(device, &flags, &active) != CUDA_SUCCESS) return false;
    if (active != 0) return true;
  }
  return false;
}

}  // namespace cudakit
