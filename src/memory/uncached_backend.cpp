// Caching off (CUDAKIT_NO_CUDA_MEMORY_CACHING=1, torch's PYTORCH_NO_CUDA_MEMORY_CACHING): every
// allocation is its own cudaMalloc and every free its own cudaFree, so that compute-sanitizer's
// memcheck sees each allocation's bounds and each use after free. See Note [Allocator backends].
//
// cudaFree is not documented to wait for the work queued on the streams that used the memory, so
// a free first synchronizes the device (and the device of each stream record_stream() named),
// then calls cudaFree. The device, not the streams: the program may have destroyed the stream a
// block was allocated on before it frees the block, and a destroyed stream must not be touched
// (the caching allocator's synchronize does the same). This mode is for finding memory errors,
// not for speed. The statistics are exact: each allocation is one segment of exactly its size.

#include <cuda_runtime_api.h>

#include <algorithm>
#include <vector>

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
    return CUDAKIT_ALLOCATED_OR_NULL(cudaMalloc(&ptr, bytes), ptr);
  }

  void release(void* ptr, const Allocation& a) override {
    std::vector<int> devices{a.device};
    for (const StreamRef& s : a.usage) {
      if (std::find(devices.begin(), devices.end(), s.device()) == devices.end()) devices.push_back(s.device());
    }
    for (int d : devices) {
      DeviceGuard guard(d);
      CUDAKIT_CHECK_CUDA(cudaDeviceSynchronize());
    }
    DeviceGuard guard(a.device);
    CUDAKIT_CHECK_CUDA(cudaFree(ptr));
  }

  bool releases_on_streams() const noexcept override { return false; }
};

}  // namespace

std::unique_ptr<AllocatorBackend> make_uncached_backend() { return std::make_unique<UncachedBackend>(); }

}  // namespace cudakit::memory::detail
