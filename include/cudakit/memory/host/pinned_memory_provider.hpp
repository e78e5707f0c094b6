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

// The source of PinnedHostAllocator's blocks. Called without the allocator's lock, from any
// thread, concurrently: implementations must be thread-safe.
class PinnedMemoryProvider {
 public:
  // Memory handed out is not returned by the destructor: the allocator frees it first.
  virtual ~PinnedMemoryProvider() = default;
  // `bytes` of host memory (bytes > 0). Returns nullptr when the memory cannot be provided, so
  // that the allocator can free its cache and retry before it reports an out-of-memory error.
  // @param bytes the block's size (a size class of the allocator).
  // @return the block, or nullptr when memory cannot be provided.
  // @throws CudaError (the CUDA providers) for any failure other than exhausted memory.
  [[nodiscard]] virtual void* allocate(std::size_t bytes) = 0;
  // Returns memory from allocate(). Never throws: the allocator frees from its destructor.
  // @param ptr a block from allocate().
  virtual void free(void* ptr) noexcept = 0;
  // Names the underlying call in error messages ("cudaHostAlloc").
  // @return a static name.
  [[nodiscard]] virtual std::string_view name() const noexcept = 0;
};

// Page-locked memory from cudaHostAlloc(cudaHostAllocDefault), released by cudaFreeHost
// (which synchronizes the device). Nothing touches the CUDA runtime until the first allocate().
// @return a new provider.
[[nodiscard]] std::unique_ptr<PinnedMemoryProvider> make_cuda_pinned_memory_provider();

// Page-locked memory from an anonymous mmap whose pages `fault_threads` threads fault in before
// cudaHostRegister locks them, released by cudaHostUnregister and munmap (torch's
// pinned_use_cuda_host_register with pinned_num_register_threads). See Note [Registered pinned
// memory].
// @param fault_threads the threads that fault pages in, at least 1.
// @return a new provider.
// @throws InvalidArgumentError when fault_threads is 0.
[[nodiscard]] std::unique_ptr<PinnedMemoryProvider> make_registered_pinned_memory_provider(unsigned fault_threads);

// The provider that config's pinned keys choose: registered memory with
// pinned_use_host_register, cudaHostAlloc otherwise.
// @param config the settings (pinned_use_host_register, pinned_num_register_threads).
// @return a new provider.
// @throws InvalidArgumentError when pinned_num_register_threads is 0 with registered memory.
[[nodiscard]] std::unique_ptr<PinnedMemoryProvider> make_pinned_memory_provider(const AllocatorConfig& config);

}  // namespace cudakit::memory
