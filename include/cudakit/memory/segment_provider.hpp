#pragma once
// @brief SegmentProvider: where the caching allocator's memory comes from. The policy (which block
// serves which request) lives in CachingAllocator and never calls CUDA; a provider turns its
// decisions into driver calls (CudaSegmentProvider), into host memory for tests and for the
// no-GPU replay backend (HostSegmentProvider), or into a user's allocation functions.

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

namespace cudakit::memory {

// A stream as the policy sees it: the cudaStream_t's value (0 = the default stream).
using StreamKey = std::uintptr_t;

class SegmentProvider {
 public:
  virtual ~SegmentProvider() = default;
  [[nodiscard]] virtual std::string name() const = 0;

  // A whole segment of `bytes` for use on `stream`; nullptr when memory is exhausted (other
  // failures throw).
  virtual void* allocate_segment(std::size_t bytes, StreamKey stream) = 0;
  virtual void free_segment(void* ptr, std::size_t bytes, StreamKey stream) noexcept = 0;

  // Expandable ranges (See Note [Expandable arenas]). page_size() == 0: not supported.
  [[nodiscard]] virtual std::size_t page_size() const { return 0; }
  // Reserves address space only; nullptr if none is left.
  virtual void* reserve_range(std::size_t bytes) { (void)bytes; return nullptr; }
  virtual void release_range(void* base, std::size_t bytes) noexcept { (void)base; (void)bytes; }
  // Backs [addr, addr + bytes) (page multiples) with new memory; false when memory is exhausted.
  virtual bool map(void* addr, std::size_t bytes) { (void)addr; (void)bytes; return false; }
  // Returns a range that map() backed, exactly as mapped.
  virtual void unmap(void* addr, std::size_t bytes) noexcept { (void)addr; (void)bytes; }

  // Waits for the work that may still use memory last used on `stream`, before that memory is
  // returned to the driver. The stream may no longer exist: implementations must not touch it.
  virtual void synchronize(StreamKey stream) { (void)stream; }
  // (free, total) bytes of the memory this provider draws from: for OOM reports and the
  // per-process fraction.
  [[nodiscard]] virtual std::pair<std::size_t, std::size_t> memory_info() const = 0;
  // Total bytes alone (memory_info().second); providers that know it without a driver call
  // override this, since the allocator asks on every growth under a fraction limit.
  [[nodiscard]] virtual std::size_t total_memory() const { return memory_info().second; }
};

}  // namespace cudakit::memory
