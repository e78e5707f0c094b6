#pragma once
// @brief Allocator statistics with torch.cuda.memory_stats()'s names and meaning.

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "cudakit/memory/nested_stats.hpp"

namespace cudakit::memory {

// One counter: its current value, its peak since the last reset, and the totals added and
// removed since the last reset of accumulated stats.
struct Stat {
  std::int64_t current = 0;
  std::int64_t peak = 0;
  std::int64_t allocated = 0;
  std::int64_t freed = 0;

  void increase(std::int64_t amount) noexcept {
    current += amount;
    allocated += amount;
    if (current > peak) peak = current;
  }
  void decrease(std::int64_t amount) noexcept {
    current -= amount;
    freed += amount;
  }
  void merge(const Stat& other) noexcept {
    current += other.current;
    peak += other.peak;
    allocated += other.allocated;
    freed += other.freed;
  }
};

// Which requests a stat counts: all, small (<= 1 MiB) or large ones.
enum class StatPool : int { all = 0, small_pool = 1, large_pool = 2 };
using StatArray = std::array<Stat, 3>;

struct MemoryStats {
  StatArray allocation;            // live allocations (count)
  StatArray segment;               // segments / mapped chunks obtained from the driver (count)
  StatArray active;                // blocks allocated or awaiting stream events (count)
  StatArray inactive_split;        // free blocks that are parts of split segments (count)
  StatArray allocated_bytes;       // bytes of live allocations (rounded block sizes)
  StatArray reserved_bytes;        // bytes obtained from the driver
  StatArray active_bytes;          // bytes of active blocks
  StatArray inactive_split_bytes;  // bytes of inactive split blocks
  StatArray requested_bytes;       // bytes asked for by callers (before rounding)
  Stat oversize_allocations;       // allocations above max_split_size
  Stat oversize_segments;
  std::int64_t num_alloc_retries = 0;  // allocations that freed the cache and retried
  std::int64_t num_ooms = 0;           // OutOfMemoryErrors thrown
  std::int64_t num_sync_all_streams = 0;
  std::int64_t num_device_alloc = 0;   // calls that obtained memory from the driver
  std::int64_t num_device_free = 0;    // calls that returned memory to the driver
  // Requests served by memory another stream had freed (cudakit's; not in torch's statistics).
  std::int64_t num_cross_stream_reuses = 0;
  std::int64_t max_split_size = 0;

  // f(a's counter, b's same counter) for every Stat of two MemoryStats (each entry of the
  // StatArrays, then the two oversize counters); A and B are MemoryStats, const or not.
  template <class A, class B, class F>
  static void for_each_stat(A& a, B& b, F&& f) {
    for (auto member : {&MemoryStats::allocation, &MemoryStats::segment, &MemoryStats::active,
                        &MemoryStats::inactive_split, &MemoryStats::allocated_bytes, &MemoryStats::reserved_bytes,
                        &MemoryStats::active_bytes, &MemoryStats::inactive_split_bytes, &MemoryStats::requested_bytes}) {
      for (std::size_t i = 0; i < std::tuple_size_v<StatArray>; ++i) f((a.*member)[i], (b.*member)[i]);
    }
    f(a.oversize_allocations, b.oversize_allocations);
    f(a.oversize_segments, b.oversize_segments);
  }
  // Adds `other` in: currents, totals and counts summed, peaks summed (an upper bound on the
  // peak of the sum), max_split_size the larger.
  void merge(const MemoryStats& other) noexcept;

  // "allocated_bytes.all.current" -> value, for every counter; the keys of torch.cuda.memory_stats().
  [[nodiscard]] std::map<std::string, std::int64_t> to_map() const;
  // The same as a tree: torch.cuda.memory_stats_as_nested_dict().
  [[nodiscard]] NestedStats to_nested() const;
};

}  // namespace cudakit::memory
