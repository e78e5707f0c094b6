// Caching off (CUDAKIT_NO_CUDA_MEMORY_CACHING=1, torch's PYTORCH_NO_CUDA_MEMORY_CACHING): every
// allocation is its own cudaMalloc and every free its own cudaFree, so that compute-sanitizer's
// memcheck sees each allocation's bounds and each use after free. See Note [Allocator backends].
//
// cudaFree does not wait for the work queued on the streams that used the memory, so a free
// first blocks until the allocating stream and every stream record_stream() named have finished
// what was queued on them so far (events recorded now, then synchronized), then calls cudaFree.
// The statistics are exact: each allocation is one segment of exactly its size.

#include <cuda_runtime_api.h>

#include "cudakit/core/device_guard.hpp"
#include "cudakit/core/error.hpp"
#include "memory/detail/tracked_backend.hpp"

namespace cudakit::memory::detail {
namespace {

class UncachedBackend final : public TrackedBackend {
 public:
  UncachedBackend() : TrackedBackend(AllocatorConfig::from_environment()) {}
  // torch reports the native backend with its caching turned off.
  std::string name() const override { return "native"; }
  std::string settings() const override { return "backend:native, caching off (CUDAKIT_NO_CUDA_MEMORY_CACHING=1)"; }

 protected:
  void* obtain(std::size_t bytes, int device, StreamRef) override {
    DeviceGuard guard(device);
    void* ptr = nullptr;
    const cudaError_t status = cudaMalloc(&ptr, bytes);
    if (status == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      return nullptr;
    }
    CUDAKIT_CHECK_CUDA(status);
    return ptr;
  }

  void release(void* ptr, const Allocation& a) override {
    wait_for(all_streams(a));
    DeviceGuard guard(a.device);
    CUDAKIT_CHECK_CUDA(cudaFree(ptr));
  }
};

}  // namespace

std::unique_ptr<AllocatorBackend> make_uncached_backend() { return std::make_unique<UncachedBackend>(); }

}  // namespace cudakit::memory::detail
