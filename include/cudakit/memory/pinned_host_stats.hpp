#pragma once
// PinnedHostStats: what PinnedHostAllocator::stats() reports (torch's HostStats).
//
// Every byte the allocator holds is in exactly one of three states, so that
//   reserved_bytes.current == allocated_bytes.current + pending_bytes + cached_bytes:
// allocated (handed out, not yet deallocated), pending (deallocated, but the GPU may still use
// it: waiting for its events) and cached (free, reusable by the next allocate of its size class).
// Byte counts are of size classes (rounded sizes), not of the sizes asked for.

#include <cstddef>
#include <cstdint>

namespace cudakit::memory {

struct PinnedHostStat {
  std::size_t current = 0;
  std::size_t peak = 0;  // highest `current` since construction or reset_peak_stats()
};

struct PinnedHostStats {
  PinnedHostStat allocated_bytes;
  PinnedHostStat reserved_bytes;  // all pinned memory held: allocated + pending + cached
  std::size_t allocated_blocks = 0;
  std::size_t pending_bytes = 0;
  std::size_t pending_blocks = 0;
  std::size_t cached_bytes = 0;
  std::size_t cached_blocks = 0;
  // allocate() calls that returned memory. Each was served either from the cache or by one
  // successful provider call, so num_allocations == num_cache_hits + num_host_allocs.
  std::uint64_t num_allocations = 0;
  std::uint64_t num_cache_hits = 0;     // served from a cached block
  std::uint64_t num_host_allocs = 0;    // successful provider (cudaHostAlloc) calls
  std::uint64_t num_host_frees = 0;     // provider (cudaFreeHost) calls
  std::uint64_t num_events_recorded = 0;
  std::uint64_t num_events_created = 0;  // the event pool's size, over all devices
  std::uint64_t num_ooms = 0;           // OutOfMemoryErrors thrown
};

}  // namespace cudakit::memory
