#pragma once
// @brief CachingAllocatorReplayTarget: a CachingAllocator as the replay loop of alloc_replay.hpp
// sees an allocator (alloc, free, empty_cache, reset_peaks and the peaks it reports).

#include <cstddef>

#include "cudakit/memory/caching_allocator.hpp"

namespace cudakit::memory {

/// @brief Adapts a CachingAllocator to replay_alloc_trace's allocator interface; the statistics
/// it reports are the device-wide peaks of stats() (pool 0: every size).
struct CachingAllocatorReplayTarget {
  CachingAllocator& allocator;
  void* alloc(std::size_t bytes, StreamKey stream) { return allocator.allocate(bytes, stream); }
  void free(void* ptr, StreamKey /*stream*/) { allocator.deallocate(ptr); }
  void empty_cache() { allocator.empty_cache(); }
  void reset_peaks() { allocator.reset_peak_stats(); }
  std::size_t peak_allocated() { return static_cast<std::size_t>(allocator.stats().allocated_bytes[0].peak); }
  std::size_t peak_reserved() { return static_cast<std::size_t>(allocator.stats().reserved_bytes[0].peak); }
  std::size_t device_allocations() { return static_cast<std::size_t>(allocator.stats().num_device_alloc); }
};

}  // namespace cudakit::memory
