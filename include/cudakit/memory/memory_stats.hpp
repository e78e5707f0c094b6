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
  std::int64_t current = 0;  // the value now
  std::int64_t peak = 0;  // the highest `current` since the last peak reset
  std::int64_t allocated = 0;  // the total added since the last reset of accumulated stats
  std::int64_t freed = 0;  // the total removed since the last reset of accumulated stats

  // Adds `amount` to the current value and the added total, raising the peak if passed.
  // @param amount what is added (a count or bytes).
  void increase(std::int64_t amount) noexcept {
    current += amount;
    allocated += amount;
    if (current > peak) peak = current;
  }
  // Removes `amount` from the current value and adds it to the removed total.
  // @param amount what is removed.
  void decrease(std::int64_t amount) noexcept {
    current -= amount;
    freed += amount;
  }
  // Adds `other` in, field by field (the peaks too: the result is an upper bound on the peak
  // of the sum).
  // @param other the counter to add.
  void merge(const Stat& other) noexcept {
    current += other.current;
    peak += other.peak;
    allocated += other.allocated;
    freed += other.freed;
  }
};

// Which requests a stat counts: all, small (<= 1 MiB) or large ones.
enum class StatPool : int { all = 0, small_pool = 1, large_pool = 2 };
// One counter per StatPool, indexed by its value: [0] all, [1] small, [2] large.
using StatArray = std::array<Stat, 3>;

// A device allocator's statistics (torch.cuda.memory_stats()): a copy, consistent at the time it
// was taken. Byte counts are of rounded sizes unless the field says otherwise.
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
  Stat oversize_segments;          // segments above max_split_size
  std::int64_t num_alloc_retries = 0;  // allocations that freed the cache and retried
  std::int64_t num_ooms = 0;           // OutOfMemoryErrors thrown
  std::int64_t num_sync_all_streams = 0;  // releases of the whole cache (empty_cache, retries)
  std::int64_t num_device_alloc = 0;   // calls that obtained memory from the driver
  std::int64_t num_device_free = 0;    // calls that returned memory to the driver
  // Requests served by memory another stream had freed (cudakit's; not in torch's statistics).
  std::int64_t num_cross_stream_reuses = 0;
  std::int64_t max_split_size = 0;  // the max_split_size setting in bytes; -1 when unlimited

  // f(a's counter, b's same counter) for every Stat of two MemoryStats (each entry of the
  // StatArrays, then the two oversize counters); A and B are MemoryStats, const or not.
  // @tparam A MemoryStats, const or not.
  // @tparam B MemoryStats, const or not.
  // @tparam F a callable taking (A's Stat&, B's Stat&).
  // @param a the first statistics.
  // @param b the second statistics.
  // @param f called once per counter.
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
  // @param other the statistics to add.
  void merge(const MemoryStats& other) noexcept;

  // "allocated_bytes.all.current" -> value, for every counter; the keys of torch.cuda.memory_stats().
  // @return the flat dict, sorted by key.
  [[nodiscard]] std::map<std::string, std::int64_t> to_map() const;
  // The same as a tree: torch.cuda.memory_stats_as_nested_dict().
  // @return the tree whose flatten() is to_map().
  [[nodiscard]] NestedStats to_nested() const;
};

}  // namespace cudakit::memory
