#pragma once
// StatCounters: the counters of MemoryStats whose currents and peaks the device's ledger keeps
// (See Note [Device-wide peaks] in device_ledger.hpp), named as MemoryStats's, so that one
// change applies to any of them: a shard's own MemoryStats, the ledger's sums, a shard's
// headroom.

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "cudakit/memory/memory_stats.hpp"

namespace cudakit::memory::detail {

#define CUDAKIT_STAT_COUNTER_ARRAYS(X) \
  X(allocation) X(segment) X(active) X(inactive_split) X(allocated_bytes) X(reserved_bytes) \
  X(active_bytes) X(inactive_split_bytes) X(requested_bytes)

// How many counters StatCounters has.
inline constexpr std::size_t kStatCounters = 9 * 3 + 2;

template <class Counter>
struct StatCounters {
#define CUDAKIT_STAT_COUNTER_ARRAY(name) std::array<Counter, 3> name{};
  CUDAKIT_STAT_COUNTER_ARRAYS(CUDAKIT_STAT_COUNTER_ARRAY)
#undef CUDAKIT_STAT_COUNTER_ARRAY
  Counter oversize_allocations{};
  Counter oversize_segments{};

  // f(a's counter, b's same counter) for every counter; a and b are StatCounters of any kind or
  // MemoryStats, const or not.
  template <class A, class B, class F>
  static void zip(A& a, B& b, F&& f) {
#define CUDAKIT_STAT_COUNTER_ZIP(name) \
  for (std::size_t i = 0; i < 3; ++i) f(a.name[i], b.name[i]);
    CUDAKIT_STAT_COUNTER_ARRAYS(CUDAKIT_STAT_COUNTER_ZIP)
#undef CUDAKIT_STAT_COUNTER_ZIP
    f(a.oversize_allocations, b.oversize_allocations);
    f(a.oversize_segments, b.oversize_segments);
  }
  // f(a's counter) for every counter of a.
  template <class A, class F>
  static void each(A& a, F&& f) {
    zip(a, a, [&](auto& counter, auto&) { f(counter); });
  }
  // f(a's counter, b's, c's) for every counter, as zip.
  template <class A, class B, class C, class F>
  static void zip3(A& a, B& b, C& c, F&& f) {
#define CUDAKIT_STAT_COUNTER_ZIP3(name) \
  for (std::size_t i = 0; i < 3; ++i) f(a.name[i], b.name[i], c.name[i]);
    CUDAKIT_STAT_COUNTER_ARRAYS(CUDAKIT_STAT_COUNTER_ZIP3)
#undef CUDAKIT_STAT_COUNTER_ZIP3
    f(a.oversize_allocations, b.oversize_allocations, c.oversize_allocations);
    f(a.oversize_segments, b.oversize_segments, c.oversize_segments);
  }
};

// A running sum: the ledger's current of a counter.
struct SumCounter {
  std::int64_t value = 0;
  void increase(std::int64_t amount) noexcept { value += amount; }
  void decrease(std::int64_t amount) noexcept { value -= amount; }
};

// Set when a change through the ledger takes a sum past its peak (a LedgerCounter's increase);
// DeviceLedger::apply() clears and reads it around one change (See Note [Reading counters just
// written]).
[[gnu::tls_model("initial-exec")]] inline thread_local bool t_ledger_peak_passed = false;

// One counter of the device's ledger (See Note [Device-wide peaks] in device_ledger.hpp): `value`,
// the sum over the shards of their values and unspent headroom (the ledger's bound), and `peak`,
// the device's peak. An increase past the peak only notes it: whether that is a new peak of the
// device, the ledger decides.
struct LedgerCounter {
  std::int64_t value = 0;
  std::int64_t peak = 0;
  void increase(std::int64_t amount) noexcept {
    value += amount;
    if (value > peak) t_ledger_peak_passed = true;
  }
  void decrease(std::int64_t amount) noexcept { value -= amount; }
};

// Note [Reading counters just written]
// A change on a shard with headroom (a second shard exists: several streams, or threads sharing a
// stream) wrote a few headroom counters, then asked Headroom::overdrawn(), a branch-free scan of
// all kStatCounters that compilers turn into 16- and 32-byte loads. A load wider than the stores it
// overlaps cannot take their values from the store buffer and waits for them to reach the cache:
// that scan dominated the statistics' time of an allocation beside another stream
// (notes/allocator.md), and a scalar scan with an early exit cost as much in compares. Only
// an increase can take a counter below zero, and a shard's headroom is never overdrawn before a
// change (settle() grants or takes the headroom back), so the increase itself notes it, in a
// flag of the calling thread that the allocator clears before the change and reads after it. The
// ledger's sums do the same for their peaks: no sum lies above its peak between two changes (each
// change ends with the peaks raised, or the headroom taken back until that holds), so a change
// through the ledger passed a peak exactly when one of its increases did, and the ledger reads a
// flag instead of comparing every sum with its peak after each change.

// Set when a headroom counter goes below zero on this thread; Engine::count() clears and reads it
// around one change (See Note [Reading counters just written]).
[[gnu::tls_model("initial-exec")]] inline thread_local bool t_headroom_overdrawn = false;

// What a shard may still add to a counter without telling the ledger: an increase spends it, a
// decrease gives it back; below zero, the shard has gone past what it was granted.
struct HeadroomCounter {
  std::int64_t left = 0;
  void increase(std::int64_t amount) noexcept {
    left -= amount;
    if (left < 0) [[unlikely]] t_headroom_overdrawn = true;
  }
  void decrease(std::int64_t amount) noexcept { left += amount; }
};

// A shard's headroom under the device's peaks (See Note [Device-wide peaks]).
struct Headroom : StatCounters<HeadroomCounter> {
  // Whether some counter went past its grant, all of them looked at (the ledger's settle(); the
  // fast path reads t_headroom_overdrawn instead).
  [[nodiscard]] bool overdrawn() const noexcept {
    static_assert(std::is_trivially_copyable_v<StatCounters<HeadroomCounter>> &&
                  sizeof(StatCounters<HeadroomCounter>) == kStatCounters * sizeof(std::int64_t));
    std::array<std::int64_t, kStatCounters> left;
    std::memcpy(left.data(), static_cast<const StatCounters<HeadroomCounter>*>(this), sizeof left);
    std::uint64_t signs = 0;
    for (const std::int64_t l : left) signs |= static_cast<std::uint64_t>(l);
    return (signs >> 63) != 0;
  }
};

}  // namespace cudakit::memory::detail
