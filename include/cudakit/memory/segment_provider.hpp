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

// The source of a CachingAllocator's memory. The allocator calls it with its own locks held, from
// any thread (implementations must be thread-safe), and never concurrently for one range.
// Memory returned by allocate_segment() or map() is handed to the program at once.
class SegmentProvider {
 public:
  // Destroying a provider does not return memory handed out; the allocator returns it first.
  virtual ~SegmentProvider() = default;
  // @return a short name for messages and OOM reports ("cuda:0", "host").
  [[nodiscard]] virtual std::string name() const = 0;

  // A whole segment of `bytes` for use on `stream`; nullptr when memory is exhausted (other
  // failures throw).
  // @param bytes the segment's size (a multiple of the allocator's segment rounding).
  // @param stream the stream whose requests the segment serves.
  // @return the segment's address, or nullptr when memory is exhausted.
  // @throws CudaError (CudaSegmentProvider) for any other failure of the driver.
  virtual void* allocate_segment(std::size_t bytes, StreamKey stream) = 0;
  // Returns a segment allocate_segment() gave. When it returns cached memory the allocator calls
  // synchronize() first, so no queued work uses it. Must not throw (failures are logged).
  // @param ptr the segment's address.
  // @param bytes its size, as allocated.
  // @param stream the stream it was allocated for (which may no longer exist).
  virtual void free_segment(void* ptr, std::size_t bytes, StreamKey stream) noexcept = 0;

  // Expandable ranges (See Note [Expandable arenas]). page_size() == 0: not supported.
  // @return the mapping granularity in bytes, or 0 when ranges cannot be mapped on demand.
  [[nodiscard]] virtual std::size_t page_size() const { return 0; }
  // Reserves address space only; nullptr if none is left.
  // @param bytes the range's size, a multiple of page_size().
  // @return the range's base, or nullptr.
  virtual void* reserve_range(std::size_t bytes) { (void)bytes; return nullptr; }
  // Gives back address space reserve_range() reserved, once nothing in it is mapped.
  // @param base the range's base.
  // @param bytes its size, as reserved.
  virtual void release_range(void* base, std::size_t bytes) noexcept { (void)base; (void)bytes; }
  // Backs [addr, addr + bytes) (page multiples) with new memory; false when memory is exhausted.
  // @param addr the start, inside a reserved range, page-aligned.
  // @param bytes the length, a multiple of page_size().
  // @return true when mapped (readable and writable by the device), false when memory is exhausted.
  virtual bool map(void* addr, std::size_t bytes) { (void)addr; (void)bytes; return false; }
  // Returns a range that map() backed, exactly as mapped.
  // @param addr the start map() was given.
  // @param bytes the length map() was given.
  virtual void unmap(void* addr, std::size_t bytes) noexcept { (void)addr; (void)bytes; }

  // Waits for the work that may still use memory last used on `stream`, before that memory is
  // returned to the driver. The stream may no longer exist: implementations must not touch it.
  // Blocks the host (CudaSegmentProvider synchronizes the whole device); the default does nothing.
  // @param stream the stream the memory was last used on.
  virtual void synchronize(StreamKey stream) { (void)stream; }
  // (free, total) bytes of the memory this provider draws from: for OOM reports and the
  // per-process fraction.
  // @return the pair {free bytes, total bytes}.
  [[nodiscard]] virtual std::pair<std::size_t, std::size_t> memory_info() const = 0;
  // Total bytes alone (memory_info().second); providers that know it without a driver call
  // override this, since the allocator asks on every growth under a fraction limit.
  // @return the total bytes.
  [[nodiscard]] virtual std::size_t total_memory() const { return memory_info().second; }
};

}  // namespace cudakit::memory
