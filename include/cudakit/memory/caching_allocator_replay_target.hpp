#pragma once
// @brief CachingAllocatorReplayTarget: a CachingAllocator as the replay loop of alloc_replay.hpp
// sees an allocator (alloc, free, empty_cache, reset_peaks and the peaks it reports).

#include <cstddef>

#include "cudakit/memory/caching_allocator.hpp"

namespace cudakit::memory {

/// @brief Adapts a CachingAllocator to replay_alloc_trace's allocator interface; the statistics
/// it reports are the device-wide peaks of stats() (pool 0: every size).
struct CachingAllocatorReplayTarget {
  CachingAllocator& allocator;  // the allocator replayed against; it must outlive the target
  // CachingAllocator::allocate() from the default pool, stream-ordered on `stream`.
  // @param bytes the size requested.
  // @param stream the trace stream's StreamKey.
  // @return the block (nullptr for 0 bytes).
  // @throws OutOfMemoryError as CachingAllocator::allocate().
  void* alloc(std::size_t bytes, StreamKey stream) { return allocator.allocate(bytes, stream); }
  // CachingAllocator::deallocate(): the block is reusable on its own stream at once.
  // @param ptr a block alloc() returned.
  // @throws InvalidArgumentError as CachingAllocator::deallocate().
  void free(void* ptr, StreamKey /*stream*/) { allocator.deallocate(ptr); }
  // CachingAllocator::empty_cache(): waits for pending frees and returns cached memory.
  void empty_cache() { allocator.empty_cache(); }
  // CachingAllocator::reset_peak_stats().
  void reset_peaks() { allocator.reset_peak_stats(); }
  // @return the peak of allocated bytes (all pools and streams) since reset_peaks().
  std::size_t peak_allocated() { return static_cast<std::size_t>(allocator.stats().allocated_bytes[0].peak); }
  // @return the peak of reserved bytes since reset_peaks().
  std::size_t peak_reserved() { return static_cast<std::size_t>(allocator.stats().reserved_bytes[0].peak); }
  // @return the segments obtained from the provider so far (num_device_alloc).
  std::size_t device_allocations() { return static_cast<std::size_t>(allocator.stats().num_device_alloc); }
};

}  // namespace cudakit::memory
