#pragma once
// DeviceLedger: the device's current and peak of every statistic while several shards exist,
// exact, with each shard's changes kept to itself while it stays under its headroom (See Note
// [Device-wide peaks]).

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "cudakit/memory/memory_stats.hpp"
#include "memory/detail/shard.hpp"
#include "memory/detail/spin_lock.hpp"
#include "memory/detail/stat_counters.hpp"

namespace cudakit::memory::detail {

// Note [Device-wide peaks]
// A device-wide peak is the highest sum of the shards' values at one moment, which summing the
// shards' own peaks overstates whenever several streams allocate at different times (eight
// streams that each peak at 10 GiB in turn would report 80 GiB). torch keeps every peak exact
// by serializing every allocation behind one device-wide lock; a ledger that every shard
// writes at every change (as this one first did) is exact too, but sixteen threads on their own
// streams then queue for its cache line and run slower together than one thread alone.
// The ledger here is exact and leaves the fast path to each shard:
// - While one shard exists, its own statistics are the device's, exact; the ledger is off.
// - When the second shard is created (under the creation mutex, no other appearing meanwhile),
//   the ledger starts from the one shard's statistics. From then on it keeps, for each counter,
//   `bound`: the sum over the shards of each one's current value plus the headroom it was
//   granted, and `peak`, the device's peak. Without headroom anywhere, bound is the device's
//   current value, exact, and every change raises the peak at once (the old ledger).
// - Headroom: a shard whose own peak lies above its current value is granted the difference,
//   counter by counter, out of the slack under the device's peak (peak - bound): since the sum
//   of the shards' values never exceeds bound, and bound never exceeds peak, no change inside
//   the headroom can make a new peak, and the shard applies it to itself alone (a few adds and
//   one branch beside its own statistics: Headroom::overdrawn). Threads that allocate and free
//   on their own streams in a steady state thus touch the ledger only while they climb to
//   their own peaks.
// - A change past a shard's headroom asks the ledger for more; slack left, it is granted. When
//   none is left (a new device peak may be happening), the exact sum is needed: every shard
//   gives its headroom back (collapse), the overdrawing one first, and the ledger's bound is
//   then the exact sum, whose excess over the peak is the new peak. The overdrawing shard keeps
//   its lock meanwhile: no other thread can see its change before the peak includes it, so the
//   change takes effect, for every observer, at the collapse's end.
// - A collapse does not wait while holding the ledger's lock: it marks itself wanted, so that a
//   shard with headroom gives it back at its next change, and takes each such shard's lock with
//   try_lock to do it there itself. No path waits for a shard lock while holding another, except
//   reconfigure(), which gives back the headroom of the shards it holds while it waits.
// - stats() and reset_peak_stats() collapse too, then read or reset the exact values; grants
//   start again as shards change. No headroom is granted while a collapse is wanted.
// `exact_peaks:False` turns the ledger off: each stream's shard then keeps its own peaks and
// stats() reports their sums (upper bounds; exact for reserved bytes, kept by ReservedBytes).
// Lent and pending blocks change nothing here: every change goes through Engine::count().
class [[gnu::visibility("hidden")]] DeviceLedger {
 public:
  // Whether the ledger is kept: a second shard exists and exact peaks were asked for.
  [[nodiscard]] bool active() const noexcept { return active_.load(std::memory_order_acquire); }
  // Whether shards must give their headroom back (a collapse is under way).
  [[nodiscard]] bool collapse_wanted() const noexcept { return wanted_.load(std::memory_order_relaxed); }

  // Shards are created under this mutex, so that none is created while the ledger starts.
  [[nodiscard]] std::mutex& creation_mutex() noexcept { return creation_mutex_; }
  // Counts a shard being created (creation_mutex() held): true for the second, when the ledger
  // starts.
  [[nodiscard]] bool count_shard() noexcept { return ++shards_created_ == 2; }
  // Starts from the statistics of the one shard that exists (it locked, creation_mutex() held).
  void start(const MemoryStats& only_shard);

  // A change already applied to s's own statistics, s without headroom (s locked): `change`
  // applies it to the ledger's sums.
  template <class Change>
  void apply(Shard& s, Change&& change) {
    lock_.lock();  // not lock_guard: GCC made its constructor a call on this path
    t_ledger_peak_passed = false;  // See Note [Reading counters just written].
    change(sums_);
    finish_change(s, t_ledger_peak_passed);
  }
  // s went past its headroom or a collapse is wanted (s locked, its change already applied to
  // its statistics and its headroom).
  void settle(Shard& s);
  // Gives back the headroom of a shard the caller holds locked while it waits for others
  // (reconfigure()).
  void give_back_held(Shard& s);

  // The device's currents and peaks into `out` (whose totals stay the shards' sums), exact.
  void read(MemoryStats& out);
  // Every peak down to its current value (reset_peak_stats).
  void reset_peaks();

 private:
  // After a change applied to the sums (lock_ held; released on return); `passed`: whether a
  // sum may lie above its peak.
  void finish_change(Shard& s, bool passed);
  // Gives every shard's headroom back (lock_ not held on entry, held on return); with
  // `until_under_peaks`, only until bound is under every peak again (See Note [Collapsing only as
  // far as needed]).
  void collapse(bool until_under_peaks = false);
  void give_back(Shard& s);   // lock_ and s locked
  bool grant(Shard& s, bool overdrawn_only);  // lock_ and s locked
  [[nodiscard]] bool above_peaks() const;  // lock_ held
  void raise_peaks();                      // lock_ held
  void want_collapse();                    // lock_ held
  void collapse_done();                    // lock_ held

  mutable SpinLock lock_;
  alignas(64) StatCounters<LedgerCounter> sums_;  // each counter's bound and peak, under lock_
  std::vector<Shard*> with_headroom_;             // under lock_
  int collapses_wanted_ = 0;                      // under lock_
  alignas(64) std::atomic<bool> wanted_{false};
  std::atomic<bool> active_{false};
  std::mutex creation_mutex_;
  std::size_t shards_created_ = 0;  // under creation_mutex_
};

}  // namespace cudakit::memory::detail
