#pragma once
// PinnedMemoryProvider: where PinnedHostAllocator gets its raw host memory from. The default one
// calls cudaHostAlloc / cudaFreeHost; tests substitute one backed by malloc, so that the caching
// policy is exercised on machines without a GPU.

#include <cstddef>
#include <memory>
#include <string_view>

namespace cudakit::memory {

class PinnedMemoryProvider {
 public:
  virtual ~PinnedMemoryProvider() = default;
  // `bytes` of host memory (bytes > 0). Returns nullptr when the memory cannot be provided, so
  // that the allocator can free its cache and retry before it reports an out-of-memory error.
  // @throws anything else that goes wrong (CudaError for the CUDA provider).
  [[nodiscard]] virtual void* allocate(std::size_t bytes) = 0;
  // Returns memory from allocate(). Never throws: the allocator frees from its destructor.
  virtual void free(void* ptr) noexcept = 0;
  // Names the underlying call in error messages ("cudaHostAlloc").
  [[nodiscard]] virtual std::string_view name() const noexcept = 0;
};

// Page-locked memory from cudaHostAlloc(cudaHostAllocDefault), released by cudaFreeHost.
// Nothing touches the CUDA runtime until the first allocate().
[[nodiscard]] std::unique_ptr<PinnedMemoryProvider> make_cuda_pinned_memory_provider();

}  // namespace cudakit::memory
