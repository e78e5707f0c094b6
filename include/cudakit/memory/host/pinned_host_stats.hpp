#pragma once
// @brief PinnedHostStats: what PinnedHostAllocator::stats() reports (torch's HostStats).
//
// Every byte the allocator holds is in exactly one of three states, so that
//   reserved_bytes.current == allocated_bytes.current + pending_bytes + cached_bytes:
// allocated (handed out, not yet deallocated), pending (deallocated, but the GPU may still use
// it: waiting for its events) and cached (free, reusable by the next allocate of its size class).
// Byte counts are of size classes (rounded sizes), not of the sizes asked for.

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace cudakit::memory {

// One byte count: its value now and its peak.
struct PinnedHostStat {
  std::size_t current = 0;  // bytes now
  std::size_t peak = 0;  // highest `current` since construction or reset_peak_stats()
};

// Time spent in provider calls, in microseconds (torch's host_alloc_time / host_free_time).
struct PinnedHostDuration {
  std::uint64_t count = 0;  // calls timed
  double total_us = 0.0;  // their total duration
  double min_us = 0.0;  // over the calls counted; 0 before the first
  double max_us = 0.0;  // the longest call; 0 before the first
  // @return total_us / count, or 0 before the first call.
  [[nodiscard]] double average_us() const noexcept {
    return count ? total_us / static_cast<double>(count) : 0.0;
  }
  // Counts one call.
  // @param us its duration in microseconds.
  void add(double us) noexcept {
    min_us = count ? std::min(min_us, us) : us;
    max_us = std::max(max_us, us);
    total_us += us;
    ++count;
  }
  // Adds `other`'s calls to these (counts and totals add, extremes combine).
  // @param other the durations to add.
  void merge(const PinnedHostDuration& other) noexcept {
    if (other.count == 0) return;
    min_us = count ? std::min(min_us, other.min_us) : other.min_us;
    max_us = std::max(max_us, other.max_us);
    total_us += other.total_us;
    count += other.count;
  }
};

// The pinned allocator's statistics (torch's HostStats); a copy taken under the allocator's lock.
struct PinnedHostStats {
  PinnedHostStat allocated_bytes;  // bytes handed out and not yet deallocated
  PinnedHostStat reserved_bytes;  // all pinned memory held: allocated + pending + cached
  std::size_t allocated_blocks = 0;  // blocks handed out and not yet deallocated
  std::size_t pending_bytes = 0;  // bytes deallocated but waiting for their events
  std::size_t pending_blocks = 0;  // blocks deallocated but waiting for their events
  std::size_t cached_bytes = 0;  // bytes free for reuse
  std::size_t cached_blocks = 0;  // blocks free for reuse
  // allocate() calls that returned memory. Each was served either from the cache or by one
  // successful provider call, so num_allocations == num_cache_hits + num_host_allocs.
  std::uint64_t num_allocations = 0;
  std::uint64_t num_cache_hits = 0;     // served from a cached block
  std::uint64_t num_host_allocs = 0;    // successful provider (cudaHostAlloc) calls
  std::uint64_t num_host_frees = 0;     // provider (cudaFreeHost) calls
  std::uint64_t num_events_recorded = 0;  // events recorded by deallocate(), one per named stream
  std::uint64_t num_events_created = 0;  // the event pool's size, over all devices
  std::uint64_t num_ooms = 0;           // OutOfMemoryErrors thrown
  // The successful provider allocations (count == num_host_allocs) and the provider frees of
  // cached blocks (count == num_host_frees once empty_cache() or the retry has returned).
  PinnedHostDuration host_alloc_time;
  PinnedHostDuration host_free_time;  // the provider frees (cudaFreeHost) of cached blocks
};

}  // namespace cudakit::memory
