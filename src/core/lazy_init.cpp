#include "cudakit/core/lazy_init.hpp"

#include <cuda_runtime_api.h>
#include <unistd.h>

#include <atomic>

#include "cudakit/core/device.hpp"
#include "cudakit/core/driver_api.hpp"
#include "cudakit/core/error.hpp"

namespace cudakit {
namespace {
// The process that cudakit saw initialized (by init(), or asked by is_initialized()): a child
// forked from it inherits the driver's state, which CUDA cannot use there, and this says so
// without asking the driver.
std::atomic<pid_t> g_initialized_in{0};
}  // namespace

void init() {
  const int device = detail::resolve_device(-1, "init");
  // cudaInitDevice creates the device's primary context (once; later calls find it made), and
  // cudaSetDevice, since CUDA 12, makes it the thread's current context: no work is queued.
  CUDAKIT_CHECK_CUDA(cudaInitDevice(device, 0, 0));
  CUDAKIT_CHECK_CUDA(cudaSetDevice(device));
  g_initialized_in.store(getpid(), std::memory_order_relaxed);
}

bool is_initialized() noexcept {
  const pid_t initialized_in = g_initialized_in.load(std::memory_order_relaxed);
  if (initialized_in != 0 && initialized_in != getpid()) return false;  // a forked child
  if (!is_available()) return false;
  const detail::DriverApi& driver = detail::driver();
  if (!driver.loaded || driver.cuDeviceGet == nullptr || driver.cuDevicePrimaryCtxGetState == nullptr)
    return false;
  for (int ordinal = 0; ordinal < device_count(); ++ordinal) {
    CUdevice device = 0;
    unsigned int flags = 0;
    int active = 0;
    // The driver may refuse these (in a forked child, for one): that is a no as well.
    if (driver.cuDeviceGet(&device, ordinal) != CUDA_SUCCESS) return false;
    if (driver.cuDevicePrimaryCtxGetState(device, &flags, &active) != CUDA_SUCCESS) return false;
    if (active != 0) {
      g_initialized_in.store(getpid(), std::memory_order_relaxed);
      return true;
    }
  }
  return false;
}

}  // namespace cudakit
