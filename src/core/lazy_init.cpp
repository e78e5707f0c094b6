#include "cudakit/core/lazy_init.hpp"

#include <cuda_runtime_api.h>
#include <pthread.h>
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
// Whether this process (not a child forked from it) is known initialized: once it is, the
// answer needs neither the driver nor a getpid() system call, as torch's flag needs neither. A
// fork clears it in the child, which then asks as above.
std::atomic<bool> g_initialized_here{false};

void forget_in_child() noexcept { g_initialized_here.store(false, std::memory_order_relaxed); }

void mark_initialized() noexcept {
  [[maybe_unused]] static const int registered = pthread_atfork(nullptr, nullptr, &forget_in_child);
  g_initialized_in.store(getpid(), std::memory_order_relaxed);
  g_initialized_here.store(true, std::memory_order_relaxed);
}
}  // namespace

void init() {
  const int device = detail::resolve_device(-1, "init");
  // cudaInitDevice creates the device's primary context (once; later calls find it made), and
  // cudaSetDevice, since CUDA 12, makes it the thread's current context: no work is queued.
  CUDAKIT_CHECK_CUDA(cudaInitDevice(device, 0, 0));
  CUDAKIT_CHECK_CUDA(cudaSetDevice(device));
  mark_initialized();
}

bool is_initialized() noexcept {
  if (g_initialized_here.load(std::memory_order_relaxed)) return true;
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
      mark_initialized();
      return true;
    }
  }
  return false;
}

}  // namespace cudakit
