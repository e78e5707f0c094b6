#pragma once
// The device-wide counters behind the peaks that stats() reports across shards (See Note
// [Device-wide peaks]): ReservedBytes, changed only when memory is obtained from or returned to
// the driver, and AllocationGrants, changed only when a shard allocates past its grant or frees
// far below it. Neither is touched on the allocator's fast path.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>

#include "cudakit/memory/caching_allocator.hpp"
#include "cudakit/memory/memory_stats.hpp"

namespace cudakit::memory::detail {

// Note [Device-wide peaks]
// A device-wide peak is the highest sum of the shards' values at one moment, which summing the
// shards' own peaks overstates whenever several streams allocate at different times (eight
// streams that each peak at 10 GiB in turn would report 80 GiB). torch keeps the exact value by
// serializing every allocation behind one device-wide lock; we keep two device-wide counters
// instead, neither of them touched on the fast path:
// - reserved bytes change only when memory is obtained from or returned to the driver, so
//   `reserved_total` is one atomic and its peak is exact;
// - allocated bytes change on every allocation, so each shard holds a grant from a device-wide
//   counter that covers its allocated bytes with at most kPeakSlackPerStream to spare. A shard
//   takes more (one atomic add) only when an allocation would exceed its grant, keeping
//   kPeakSlackPerStream / 2 spare, and gives back down to that spare only when it holds more
//   than kPeakSlackPerStream unused. Every grant covers its shard's allocations at every
//   moment, so the grants' highest total is an upper bound on the true peak, above it by at
//   most kPeakSlackPerStream per shard (per (pool, stream) that has allocated).
//   max_memory_allocated() reports the smaller of that and the sum of the shards' peaks.
//   An alloc+free pair of up to kPeakSlackPerStream / 2 stays within the grant, so no shared
//   cache line is written (the 16-thread benchmark keeps its scaling); a larger pair costs two
//   atomic adds (~10 ns on the lent H200s' CPUs), uncontended unless several threads make such
//   pairs at once.
// - While one shard exists its own peaks are the device's, exact, and no grants are kept: a
//   program that allocates on one stream pays nothing for the above. Grants start when the
//   second shard is created, under a mutex that keeps any other shard from being created
//   meanwhile: the first shard's grant is set to cover what it holds, and the grants' peak
//   starts at its peak, which until then was the device's.
// The other peaks (per-pool splits, counts, active and requested bytes) remain sums of the
// shards' peaks: upper bounds, exact for one stream.

// Raises `peak` to `value` if that is higher.
inline void raise_peak(std::atomic<std::int64_t>& peak, std::int64_t value) {
  std::int64_t seen = peak.load(std::memory_order_relaxed);
  while (value > seen && !peak.compare_exchange_weak(seen, value, std::memory_order_relaxed)) {
  }
}

// Bytes obtained from the driver, all pools and streams (`reserved_total` in the Note).
class [[gnu::visibility("hidden")]] ReservedBytes {
 public:
  [[nodiscard]] std::size_t total() const noexcept { return total_.load(); }
  void add(std::size_t bytes) noexcept {
    raise_peak(peak_, static_cast<std::int64_t>(total_.fetch_add(bytes) + bytes));
  }
  void remove(std::size_t bytes) noexcept { total_.fetch_sub(bytes); }
  // The device's peak, given `summed`, the sum of the shards' peaks.
  [[nodiscard]] std::int64_t bound_peak(std::int64_t summed) const noexcept {
    return std::min(summed, peak_.load());
  }
  void reset_peak() noexcept { peak_ = static_cast<std::int64_t>(total_.load()); }

 private:
  std::atomic<std::size_t> total_{0};
  std::atomic<std::int64_t> peak_{0};
};

// The shards' grants from the device-wide allocated counter. On a line of its own, as it is
// written by every shard that allocates past its grant. A shard's grant is a field of the shard,
// passed in, changed under the shard's lock.
class alignas(128) [[gnu::visibility("hidden")]] AllocationGrants {
 public:
  static constexpr auto kSlack = static_cast<std::int64_t>(CachingAllocator::kPeakSlackPerStream);

  // Before an allocation brings the shard's allocated bytes to `allocated_after`.
  void cover(std::int64_t& granted, std::int64_t allocated_after) {
    if (allocated_after > granted && granting_.load(std::memory_order_relaxed)) [[unlikely]] {
      set(granted, allocated_after + kSlack / 2);
    }
  }
  // After a free has left the shard `allocated` bytes.
  void trim(std::int64_t& granted, std::int64_t allocated) {
    if (granted - allocated > kSlack) [[unlikely]] {
      set(granted, allocated + kSlack / 2);  // only once granting
    }
  }

  // Shards are created under this mutex, so that none is created while grants start.
  [[nodiscard]] std::mutex& creation_mutex() noexcept { return creation_mutex_; }
  // Counts a shard being created (creation_mutex() held): true for the second, when grants start.
  [[nodiscard]] bool count_shard() noexcept { return ++shards_created_ == 2; }
  // Starts keeping grants, for the one shard that exists (its lock held), whose allocated bytes
  // are `allocated`. The flag is set after the shard's grant and peak: its next allocation keeps
  // the grant, and stats() never sees the flag without the peak carried over.
  void start(std::int64_t& granted, const Stat& allocated) {
    raise_peak(peak_, allocated.peak);
    set(granted, allocated.current + kSlack / 2);
    granting_.store(true);
  }

  // The device's allocated peak, given `summed`, the sum of the shards' peaks.
  [[nodiscard]] std::int64_t bound_peak(std::int64_t summed) const noexcept {
    return granting_.load() ? std::min(summed, peak_.load()) : summed;
  }
  void reset_peak() noexcept { peak_ = total_.load(); }

 private:
  // Sets a shard's grant to `target` bytes.
  void set(std::int64_t& granted, std::int64_t target) {
    const std::int64_t delta = target - granted;
    granted = target;
    const std::int64_t total = total_.fetch_add(delta, std::memory_order_relaxed) + delta;
    if (delta > 0) raise_peak(peak_, total);
  }

  std::atomic<std::int64_t> total_{0};
  std::atomic<std::int64_t> peak_{0};
  std::atomic<bool> granting_{false};  // a second shard exists
  std::mutex creation_mutex_;
  std::size_t shards_created_ = 0;  // under creation_mutex_
};

}  // namespace cudakit::memory::detail
