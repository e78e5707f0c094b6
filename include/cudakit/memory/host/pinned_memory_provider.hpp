#pragma once
// @brief PinnedMemoryProvider: where PinnedHostAllocator gets its raw host memory from. The default one
// calls cudaHostAlloc / cudaFreeHost; CUDAKIT_ALLOC_CONF's pinned_use_cuda_host_register picks
// one that registers mmap'd memory instead; tests substitute one backed by malloc, so that the
// caching policy is exercised on machines without a GPU.

#include <cstddef>
#include <memory>
#include <string_view>

namespace cudakit::memory {

struct AllocatorConfig;

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

// Page-locked memory from an anonymous mmap whose pages `fault_threads` threads fault in before
// cudaHostRegister locks them, released by cudaHostUnregister and munmap (torch's
// pinned_use_cuda_host_register with pinned_num_register_threads). See Note [Registered pinned
// memory]. @throws InvalidArgumentError when fault_threads is 0.
[[nodiscard]] std::unique_ptr<PinnedMemoryProvider> make_registered_pinned_memory_provider(unsigned fault_threads);

// The provider that config's pinned keys choose: registered memory with
// pinned_use_host_register, cudaHostAlloc otherwise.
[[nodiscard]] std::unique_ptr<PinnedMemoryProvider> make_pinned_memory_provider(const AllocatorConfig& config);

}  // namespace cudakit::memory
