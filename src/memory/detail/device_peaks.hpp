#pragma once
// The device-wide counters behind the statistics that stats() reports across shards (See Note
// [Device-wide peaks]): DeviceStats, the ledger of every statistic while several shards exist,
// and ReservedBytes, changed only when memory is obtained from or returned to the driver.

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>

#include "cudakit/memory/memory_stats.hpp"
#include "memory/detail/spin_lock.hpp"

namespace cudakit::memory::detail {

// Note [Device-wide peaks]
// A device-wide peak is the highest sum of the shards' values at one moment, which summing the
// shards' own peaks overstates whenever several streams allocate at different times (eight
// streams that each peak at 10 GiB in turn would report 80 GiB). torch keeps every peak exact
// by serializing every allocation behind one device-wide lock. We keep them exact with a
// device-wide ledger instead, DeviceStats below, written only while more than one shard exists:
// - While one shard exists, its own statistics are the device's, exact, and the ledger is not
//   touched: a program that allocates on one stream pays nothing.
// - When the second shard is created (under a mutex that keeps any other shard from being
//   created meanwhile), the ledger starts as a copy of the one shard's statistics, currents and
//   peaks alike (until then they were the device's). From then on every change to a shard's
//   statistics is applied to the ledger too, in the same critical section of the shard's lock
//   (so each shard's changes reach the ledger in their order), under the ledger's own spin lock,
//   a leaf: nothing else is taken while it is held. The ledger's values are then the device's at
//   every moment and its peaks the highest sums, exact, for every statistic.
// - The cost: an uncontended spin lock and the same few additions per change (nanoseconds an
//   operation: notes/figures.md); threads that allocate on their own streams at once contend
//   for the ledger's line, which costs the 16-thread benchmark most of its scaling, still far
//   above torch's one lock (docs/performance.md, the allocator table).
//   `exact_peaks:False` turns the ledger off: each stream's shard then keeps its own peaks and
//   stats() reports their sums (upper bounds; exact for reserved bytes, kept by ReservedBytes
//   at no cost on the fast path), and the threads scale again.
// Lent and pending blocks change nothing here: every change goes through Engine::count().

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

// A counter of the device's ledger: what a Stat's current and peak are (its totals are the
// shards' sums, exact without the ledger).
struct PeakStat {
  std::int64_t current = 0;
  std::int64_t peak = 0;
  void increase(std::int64_t amount) noexcept {
    current += amount;
    if (current > peak) peak = current;
  }
  void decrease(std::int64_t amount) noexcept { current -= amount; }
};
// The ledger's counters, named as MemoryStats's, so that one change applies to either. Half a
// Stat's size: the lines a change writes move between the cores of threads that allocate at once.
struct PeakStats {
#define CUDAKIT_PEAK_STAT_ARRAYS(X) \
  X(allocation) X(segment) X(active) X(inactive_split) X(allocated_bytes) X(reserved_bytes) \
  X(active_bytes) X(inactive_split_bytes) X(requested_bytes)
#define CUDAKIT_PEAK_STAT_ARRAY(name) std::array<PeakStat, 3> name;
  CUDAKIT_PEAK_STAT_ARRAYS(CUDAKIT_PEAK_STAT_ARRAY)
#undef CUDAKIT_PEAK_STAT_ARRAY
  PeakStat oversize_allocations;
  PeakStat oversize_segments;

  // f(m's counter, p's same counter) for every counter; m and p are MemoryStats or PeakStats,
  // const or not.
  template <class M, class P, class F>
  static void zip(M& m, P& p, F&& f) {
#define CUDAKIT_PEAK_STAT_ZIP(name) \
  for (std::size_t i = 0; i < 3; ++i) f(m.name[i], p.name[i]);
    CUDAKIT_PEAK_STAT_ARRAYS(CUDAKIT_PEAK_STAT_ZIP)
#undef CUDAKIT_PEAK_STAT_ZIP
    f(m.oversize_allocations, p.oversize_allocations);
    f(m.oversize_segments, p.oversize_segments);
  }
#undef CUDAKIT_PEAK_STAT_ARRAYS
};

// The device's statistics while several shards exist (See Note [Device-wide peaks]). On lines of
// its own: every shard writes it.
class alignas(128) [[gnu::visibility("hidden")]] DeviceStats {
 public:
  // Whether changes are applied here: a second shard exists and exact peaks were asked for.
  [[nodiscard]] bool active() const noexcept { return active_.load(std::memory_order_relaxed); }
  // Applies change(stats) under the ledger's lock (the changing shard's lock held).
  template <class Change>
  [[gnu::always_inline]] void apply(Change&& change) {
    lock_.lock();  // not lock_guard: GCC made its constructor a call on the fast path
    change(stats_);
    lock_.unlock();
  }

  // Shards are created under this mutex, so that none is created while the ledger starts.
  [[nodiscard]] std::mutex& creation_mutex() noexcept { return creation_mutex_; }
  // Counts a shard being created (creation_mutex() held): true for the second, when the ledger
  // starts.
  [[nodiscard]] bool count_shard() noexcept { return ++shards_created_ == 2; }
  // Starts the ledger from the statistics of the one shard that exists (its lock held), active
  // and allocation resolved as stats() reports them. The flag is set last: that shard's next
  // change, under its lock, finds the ledger complete.
  void start(const MemoryStats& only_shard) {
    {
      std::lock_guard lock(lock_);
      PeakStats::zip(only_shard, stats_, [](const Stat& from, PeakStat& to) {
        to.current = from.current;
        to.peak = from.peak;
      });
    }
    active_.store(true, std::memory_order_release);
  }
  // The ledger's currents and peaks into `out` (whose totals stay the shards' sums).
  void read(MemoryStats& out) const {
    std::lock_guard lock(lock_);
    PeakStats::zip(out, stats_, [](Stat& to, const PeakStat& from) {
      to.current = from.current;
      to.peak = from.peak;
    });
  }
  // Every peak down to its current value (reset_peak_stats).
  void reset_peaks() {
    std::lock_guard lock(lock_);
    PeakStats::zip(stats_, stats_, [](PeakStat& st, PeakStat&) { st.peak = st.current; });
  }

 private:
  mutable SpinLock lock_;
  alignas(64) PeakStats stats_;  // under lock_
  std::atomic<bool> active_{false};
  std::mutex creation_mutex_;
  std::size_t shards_created_ = 0;  // under creation_mutex_
};

}  // namespace cudakit::memory::detail
