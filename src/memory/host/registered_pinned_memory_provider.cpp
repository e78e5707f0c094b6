// The pinned memory provider that registers memory it maps itself
// (pinned_use_cuda_host_register), and the choice between it and cudaHostAlloc.
#include <cuda_runtime_api.h>
#include <sys/mman.h>

#include <memory>
#include <mutex>
#include <source_location>
#include <unordered_map>

#include "cudakit/core/error.hpp"
#include "cudakit/memory/allocator_config.hpp"
#include "cudakit/memory/host/pinned_memory_provider.hpp"
#include "memory/host/detail/fault_in_pages.hpp"
#include "memory/host/detail/host_memory.hpp"

namespace cudakit::memory {
namespace {

// Note [Registered pinned memory]
// cudaHostAlloc allocates, zeroes and page-locks a block in one call, on the calling thread,
// and the kernel's page faults for it happen one page at a time inside the driver. With
// pinned_use_cuda_host_register (torch's key), a block is an anonymous mmap instead: up to
// pinned_num_register_threads threads fault its pages in at once (the kernel allocates and
// zeroes them in parallel), and cudaHostRegister then only locks and maps pages that already
// exist. Huge-page advice makes the faults 2 MiB each where the kernel allows it. A request
// larger than the host memory available is refused before any page is touched: faulting it in
// would bring the kernel's out-of-memory killer rather than an error. The block is
// as usable as cudaHostAlloc's for asynchronous copies (the GPU tier checks copies both ways).
class RegisteredPinnedMemoryProvider final : public PinnedMemoryProvider {
 public:
  explicit RegisteredPinnedMemoryProvider(unsigned fault_threads) : fault_threads_(fault_threads) {
    if (fault_threads == 0) {
      throw InvalidArgumentError("make_registered_pinned_memory_provider", "fault_threads must be at least 1");
    }
  }

  void* allocate(std::size_t bytes) override {
    // Faulting in more than the host (or the process's cgroup) has left would wake the kernel's
    // out-of-memory killer; refusing lets the allocator free its cache, retry, and then throw.
    if (const auto available = detail::host_memory_available(); available && bytes > *available) {
      return nullptr;
    }
    void* ptr = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (ptr == MAP_FAILED) return nullptr;  // the allocator frees its cache and retries
    (void)::madvise(ptr, bytes, MADV_HUGEPAGE);  // advice only: without THP, 4 KiB faults
    // A forked child (a data-loading worker, say) gets no copy of the block: otherwise the kernel
    // copies every pinned page into each child at fork, or, on kernels before the pinned-page
    // copy-on-write fixes, a write after the fork moves the parent's page away from the one the
    // GPU reads.
    (void)::madvise(ptr, bytes, MADV_DONTFORK);
    cudaError_t status = cudaSuccess;
    try {
      (void)detail::fault_in_pages(ptr, bytes, kFaultStride, fault_threads_, kMinBytesPerThread);
      status = cudaHostRegister(ptr, bytes, cudaHostRegisterDefault);
    } catch (...) {
      ::munmap(ptr, bytes);
      throw;
    }
    if (status != cudaSuccess) {
      ::munmap(ptr, bytes);
      if (status == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();
        return nullptr;
      }
      cudakit::detail::throw_cuda_error(status, "cudaHostRegister(ptr, bytes, cudaHostRegisterDefault)",
                                        std::source_location::current());
    }
    std::lock_guard lock(mutex_);
    sizes_.emplace(ptr, bytes);
    return ptr;
  }

  void free(void* ptr) noexcept override {
    std::size_t bytes = 0;
    {
      std::lock_guard lock(mutex_);
      const auto it = sizes_.find(ptr);
      if (it == sizes_.end()) return;  // not ours: nothing to unmap
      bytes = it->second;
      sizes_.erase(it);
    }
    CUDAKIT_WARN_CUDA(cudaHostUnregister(ptr));
    ::munmap(ptr, bytes);
  }

  [[nodiscard]] std::string_view name() const noexcept override {
    return "mmap + cudaHostRegister (refused beyond the host memory available)";
  }

 private:
  static constexpr std::size_t kFaultStride = 4096;               // the smallest page there is
  // A thread costs tens of microseconds to start (notes/figures.md): each faults at least this.
  static constexpr std::size_t kMinBytesPerThread = std::size_t{4} << 20;
  unsigned fault_threads_;
  std::mutex mutex_;
  std::unordered_map<void*, std::size_t> sizes_;
};

}  // namespace

std::unique_ptr<PinnedMemoryProvider> make_registered_pinned_memory_provider(unsigned fault_threads) {
  return std::make_unique<RegisteredPinnedMemoryProvider>(fault_threads);
}

std::unique_ptr<PinnedMemoryProvider> make_pinned_memory_provider(const AllocatorConfig& config) {
  if (config.pinned_use_host_register) {
    return make_registered_pinned_memory_provider(config.pinned_num_register_threads);
  }
  return make_cuda_pinned_memory_provider();
}

}  // namespace cudakit::memory
