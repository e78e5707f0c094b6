#pragma once
// Adapters giving cudakit's allocator and CUDA's own the interface alloc_workloads.hpp drives.

#include <cuda_runtime_api.h>

#include <cstdint>

#include "cudakit/core/error.hpp"
#include "cudakit/memory/device_allocator.hpp"

namespace cudakit::bench {

class MallocAsyncAllocator {
 public:
  MallocAsyncAllocator() {
    CUDAKIT_CHECK_CUDA(cudaDeviceGetDefaultMemPool(&pool_, 0));
    std::uint64_t keep = UINT64_MAX;  // cache like a caching allocator (torch's backend does too)
    CUDAKIT_CHECK_CUDA(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &keep));
  }
  void* alloc(std::size_t bytes, cudaStream_t s) {
    void* p;
    CUDAKIT_CHECK_CUDA(cudaMallocAsync(&p, bytes, s));
    return p;
  }
  void free(void* p, cudaStream_t s) { CUDAKIT_CHECK_CUDA(cudaFreeAsync(p, s)); }
  void empty_cache() {
    CUDAKIT_CHECK_CUDA(cudaDeviceSynchronize());
    CUDAKIT_CHECK_CUDA(cudaMemPoolTrimTo(pool_, 0));
  }
  void reset_peaks() {
    std::uint64_t zero = 0;
    CUDAKIT_CHECK_CUDA(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReservedMemHigh, &zero));
    CUDAKIT_CHECK_CUDA(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrUsedMemHigh, &zero));
  }
  std::size_t peak_allocated() { return attribute(cudaMemPoolAttrUsedMemHigh); }
  std::size_t peak_reserved() { return attribute(cudaMemPoolAttrReservedMemHigh); }
  std::size_t current_allocated() { return attribute(cudaMemPoolAttrUsedMemCurrent); }
  std::size_t current_reserved() { return attribute(cudaMemPoolAttrReservedMemCurrent); }
  std::size_t device_allocations() { return 0; }

 private:
  std::size_t attribute(cudaMemPoolAttr which) {
    std::uint64_t v = 0;
    CUDAKIT_CHECK_CUDA(cudaMemPoolGetAttribute(pool_, which, &v));
    return v;
  }
  cudaMemPool_t pool_{};
};

class MallocAllocator {
 public:
  void* alloc(std::size_t bytes, cudaStream_t) {
    void* p;
    CUDAKIT_CHECK_CUDA(cudaMalloc(&p, bytes));
    return p;
  }
  void free(void* p, cudaStream_t) { CUDAKIT_CHECK_CUDA(cudaFree(p)); }
  void empty_cache() {}
  void reset_peaks() {}
  std::size_t peak_allocated() { return 0; }
  std::size_t peak_reserved() { return 0; }
  std::size_t current_allocated() { return 0; }
  std::size_t current_reserved() { return 0; }
  std::size_t device_allocations() { return 0; }
};

// cudakit's default device allocator through its public API.
class CudakitAllocator {
 public:
  void* alloc(std::size_t bytes, cudaStream_t s) { return memory::allocate(bytes, StreamRef(s, 0)); }
  void free(void* p, cudaStream_t) { memory::deallocate(p); }
  void empty_cache() { memory::empty_cache(); }
  void reset_peaks() { memory::reset_peak_memory_stats(0); }
  std::size_t peak_allocated() { return memory::max_memory_allocated(0); }
  std::size_t peak_reserved() { return memory::max_memory_reserved(0); }
  std::size_t current_allocated() { return memory::memory_allocated(0); }
  std::size_t current_reserved() { return memory::memory_reserved(0); }
  std::size_t device_allocations() {
    return static_cast<std::size_t>(memory::memory_stats(0).num_device_alloc);
  }
};

}  // namespace cudakit::bench
