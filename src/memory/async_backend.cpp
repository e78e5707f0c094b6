// The cudaMallocAsync backend (CUDAKIT_ALLOC_CONF=backend:cudaMallocAsync): every allocation is
// cudaMallocFromPoolAsync on the device's default pool and every free cudaFreeAsync, as torch's
// CUDAMallocAsyncAllocator does. See Note [Allocator backends].
//
// What it takes from torch's:
// - the pool keeps what is freed (release threshold UINT64_MAX): memory goes back to the driver
//   only at empty_cache(), which synchronizes the device and trims the pool to zero;
// - a block used on other streams (record_stream) is freed on a stream of the backend's own that
//   first waits for events recorded on the allocating stream and on each usage stream, since
//   cudaFreeAsync takes one stream; the pool then reuses it only after all that work;
// - statistics: allocations and allocated/requested bytes counted here, reserved bytes (current
//   and peak) from the pool's cudaMemPoolAttrReservedMemCurrent / High; reset_peak_stats resets
//   the pool's high-water marks too.
// Pools routed to by use_mem_pool and graph capture stay the caching allocator's, so capture
// never records this backend's frees; a free of its memory during a capture waits for the
// capture's end (TrackedBackend::defers_during_capture).
// As under torch's backend, the stream a block was allocated on must still exist when the block
// is freed: cudaFreeAsync is queued on it (torch's streams come from a pool and live forever;
// a cudakit program that destroys a Stream frees what it allocated there first).

#include <cuda_runtime_api.h>

#include <array>
#include <cstdint>
#include <mutex>

#include "cudakit/core/device_guard.hpp"
#include "cudakit/core/error.hpp"
#include "memory/detail/tracked_backend.hpp"

namespace cudakit::memory::detail {
namespace {

class CudaMallocAsyncBackend final : public TrackedBackend {
 public:
  CudaMallocAsyncBackend() : TrackedBackend(AllocatorConfig::from_environment()) {}
  // Never destroyed while the process runs (the device-wide allocator lives until exit); the
  // pool's memory returns to the driver with the context.
  ~CudaMallocAsyncBackend() override = default;

  std::string name() const override { return "cudaMallocAsync"; }

  MemoryStats stats(int device) const override {
    MemoryStats m = TrackedBackend::stats(device);
    // The pool's reserved memory replaces the per-allocation count of the base: what the pool
    // keeps after frees is reserved too. Segments are the pool's business and stay unreported.
    for (StatArray* a : {&m.reserved_bytes, &m.segment}) *a = {};
    if (cudaMemPool_t pool = pool_if_made(device)) {
      DeviceGuard guard(device);
      Stat& reserved = m.reserved_bytes[static_cast<std::size_t>(StatPool::all)];
      reserved.current = attribute(pool, cudaMemPoolAttrReservedMemCurrent);
      reserved.peak = attribute(pool, cudaMemPoolAttrReservedMemHigh);
    }
    return m;
  }

  void reset_peak_stats(int device) override {
    TrackedBackend::reset_peak_stats(device);
    if (cudaMemPool_t pool = pool_if_made(device)) {
      DeviceGuard guard(device);
      // Zero is the one value these attributes take: it resets each mark to its current value.
      std::uint64_t zero = 0;
      CUDAKIT_CHECK_CUDA(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReservedMemHigh, &zero));
      CUDAKIT_CHECK_CUDA(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &zero));
    }
  }

 protected:
  void* obtain(std::size_t bytes, int device, StreamRef stream) override {
    cudaMemPool_t pool = pool_of(device);
    // A null handle is the current device's legacy stream.
    DeviceGuard guard(device);
    void* ptr = nullptr;
    return CUDAKIT_ALLOCATED_OR_NULL(cudaMallocFromPoolAsync(&ptr, bytes, pool, stream.handle()), ptr);
  }

  void release(void* ptr, const Allocation& a) override {
    if (a.usage.empty()) {
      DeviceGuard guard(a.device);
      CUDAKIT_CHECK_CUDA(cudaFreeAsync(ptr, a.stream.handle()));
      return;
    }
    const StreamRef free_stream = free_stream_of(a.device);
    order_after(free_stream, all_streams(a));
    DeviceGuard guard(a.device);
    CUDAKIT_CHECK_CUDA(cudaFreeAsync(ptr, free_stream.handle()));
  }

  void trim() override {
    for (int device = 0; device < kMaxDevices; ++device) {
      cudaMemPool_t pool = pool_if_made(device);
      if (!pool) continue;
      DeviceGuard guard(device);
      // Frees still queued on streams return to the pool only once their streams reach them.
      CUDAKIT_CHECK_CUDA(cudaDeviceSynchronize());
      CUDAKIT_CHECK_CUDA(cudaMemPoolTrimTo(pool, 0));
    }
  }

 private:
  static std::int64_t attribute(cudaMemPool_t pool, cudaMemPoolAttr which) {
    std::uint64_t v = 0;
    CUDAKIT_CHECK_CUDA(cudaMemPoolGetAttribute(pool, which, &v));
    return static_cast<std::int64_t>(v);
  }

  cudaMemPool_t pool_if_made(int device) const {
    if (device < 0 || device >= kMaxDevices) return nullptr;
    std::lock_guard lock(pools_mutex_);
    return pools_[static_cast<std::size_t>(device)];
  }

  cudaMemPool_t pool_of(int device) {
    std::lock_guard lock(pools_mutex_);
    cudaMemPool_t& pool = pools_[static_cast<std::size_t>(device)];
    if (pool) return pool;
    cudaMemPool_t made = nullptr;
    CUDAKIT_CHECK_CUDA(cudaDeviceGetDefaultMemPool(&made, device));
    // Keep freed memory for reuse instead of returning it at each synchronization (the default
    // threshold, 0, does that): the pool then caches as torch's backend makes it.
    std::uint64_t threshold = UINT64_MAX;
    CUDAKIT_CHECK_CUDA(cudaMemPoolSetAttribute(made, cudaMemPoolAttrReleaseThreshold, &threshold));
    // On by default; set explicitly, as torch does, because the default pool is shared with the
    // rest of the process and another library may have turned them off.
    int enable = 1;
    for (cudaMemPoolAttr reuse : {cudaMemPoolReuseFollowEventDependencies, cudaMemPoolReuseAllowOpportunistic,
                                  cudaMemPoolReuseAllowInternalDependencies}) {
      CUDAKIT_CHECK_CUDA(cudaMemPoolSetAttribute(made, reuse, &enable));
    }
    pool = made;
    return pool;
  }

  // The stream frees of blocks used on several streams go to (torch's "dummy unifying free
  // stream"): created on first need, never destroyed.
  StreamRef free_stream_of(int device) {
    std::lock_guard lock(pools_mutex_);
    cudaStream_t& s = free_streams_[static_cast<std::size_t>(device)];
    if (!s) {
      DeviceGuard guard(device);
      CUDAKIT_CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    }
    return StreamRef(s, device);
  }

  mutable std::mutex pools_mutex_;
  std::array<cudaMemPool_t, kMaxDevices> pools_{};
  std::array<cudaStream_t, kMaxDevices> free_streams_{};
};

}  // namespace

std::unique_ptr<AllocatorBackend> make_cuda_malloc_async_backend() {
  return std::make_unique<CudaMallocAsyncBackend>();
}

}  // namespace cudakit::memory::detail
