#pragma once
// StreamThreadShards: threads that allocate on one stream at once, each from a shard of its own
// thread slot (See Note [Threads sharing a stream]), a part of the caching allocator's policy
// engine.

#include <cstddef>
#include <cstdint>
#include <mutex>

#include "cudakit/memory/allocator_config.hpp"
#include "memory/detail/block.hpp"
#include "memory/detail/cross_stream_lending.hpp"
#include "memory/detail/pool.hpp"
#include "memory/detail/shard.hpp"
#include "memory/detail/thread_slots.hpp"

namespace cudakit::memory::detail {

// Note [Threads sharing a stream]
// A shard serves one (pool, stream) under one lock (Note [Shards and statistics]), so threads
// that allocate on one stream at once hand that lock, and the shard's free index, live map and
// counters, from core to core at every operation: sixteen threads on one stream run slower
// together than one alone. As tcmalloc's per-CPU caches and RMM's per-thread arenas do, such a
// stream gets more shards, one per thread slot (detail/thread_slots.hpp: the lowest free one of
// ThreadSlots::kSlots, taken at a thread's first need and given back at its exit, so that a
// server making a thread per request still has at most kSlots + 1 shards per stream).
//
// Adaptive (thread_shards:adaptive, the default): a stream keeps its one shard, the primary,
// until allocations find its lock taken kContentionsToSplit times within kContentionWindow of
// its allocations; then it is split, and each thread that later finds the lock taken moves to
// its slot's shard (made then) for that stream and stays there (the thread's shard cache and the
// stream's lookup send it there). So a program in which one thread allocates on a stream, or in
// which two take turns (PyTorch's autograd runs backward on its own thread on the forward's
// stream, the forward thread waiting), never splits and behaves exactly as before: same blocks,
// same memory, and a fast path whose only change is a try_lock where a lock was (the same
// instructions). thread_shards:always gives every thread its slot shard at its first
// allocation (tests, and programs known to share streams); off never splits.
//
// Memory: all shards of a stream are that stream's cache. A block freed on the stream may serve
// any later request on it in stream order whichever shard holds it, with no event and no wait
// (unlike lending across streams, Note [Memory across streams]): a shard whose own cache cannot
// serve a request takes a free block from the stream's other shards (primary first, one shard
// lock at a time, under the pool's shards_mutex, passing over a shard whose lock is taken)
// before it grows. The block stays its shard's:
// taken, counted and freed there (deallocate finds the shard through the arena), never counted
// as a cross-stream reuse, never an extra stream of the block. After kBorrowsBeforeGrowing
// such takes in a row without its own cache serving, a shard grows its own memory instead, so
// that a slot's thread does not go back to the contended primary for ever; what the stream
// reserves beyond one shard's is then at most a growth per slot shard. Before an out-of-memory
// error the stream's other shards are always looked at.
//
// Everything else already works over any number of shards: frees, record_stream and external
// holds find a block's shard through its arena; empty_cache, release_pool, snapshots (a
// segment's stream is its shard's), statistics and the device's exact peaks (Note [Device-wide
// peaks]: a slot shard is a shard like any other) go over every shard of the pool; a capture's
// allocations name its graph's pool, whose slot shards are that pool's. Lending across streams
// looks only at shards of other streams.

inline constexpr std::uint32_t kContentionsToSplit = 64;
inline constexpr std::uint64_t kContentionWindow = 4096;

// The thread-sharing part of the caching allocator's Engine, which derives from it (CRTP; See
// Note [Allocator internals are hidden] in block.hpp).
template <class Engine>
struct [[gnu::visibility("hidden")]] StreamThreadShards {
  Engine& e() noexcept { return static_cast<Engine&>(*this); }

  // A new shard of `pool` for `stream`: the stream's primary when `primary` is null, else the
  // slot shard `slot` of that primary (the creation mutex held, no shard lock).
  Shard& make_shard(Pool& pool, StreamKey stream, Shard* primary = nullptr, int slot = -1) {
    if (e().device_stats.count_shard() && e().config.exact_peaks) e().start_device_stats();  // See Note [Device-wide peaks].
    std::lock_guard lock(pool.shards_mutex);
    pool.shards.push_back(std::make_unique<Shard>());
    pool.shard_count.store(pool.shards.size(), std::memory_order_relaxed);
    Shard& s = *pool.shards.back();
    s.pool = &pool;
    s.stream = stream;
    s.stream_serial = e().events->stream_serial(stream);  // it exists: it allocates now
    s.stats.max_split_size = e().max_split_stat_now();
    if (!primary) {
      pool.shard_of_stream.emplace(stream, &s);
    } else {
      s.primary = primary;
      s.thread_slot = slot;
      primary->slot_shards[static_cast<std::size_t>(slot)] = &s;
      primary->slot_shard_count.fetch_add(1, std::memory_order_release);
    }
    return s;
  }

  // Whether the calling thread allocates from its slot shard of primary `p`'s stream.
  bool uses_slot_shard(const Shard& p) const {
    const ThreadShards mode = static_cast<const Engine&>(*this).thread_shards_mode;
    return mode == ThreadShards::always || (mode == ThreadShards::adaptive && p.split.load(std::memory_order_acquire));
  }

  // The calling thread's slot shard of primary `p`'s stream, made at its first use; nullptr while
  // every slot is taken. No shard lock held.
  Shard* slot_shard(Shard& p) {
    const int slot = ThisThreadSlot::get();
    if (slot < 0) return nullptr;
    Pool& pool = *p.pool;
    auto find = [&] {
      std::lock_guard lock(pool.shards_mutex);
      return p.slot_shards[static_cast<std::size_t>(slot)];
    };
    if (Shard* s = find()) return s;
    std::lock_guard creating(e().device_stats.creation_mutex());
    if (Shard* s = find()) return s;
    return &make_shard(pool, p.stream, &p, slot);
  }

  // allocate() when s's lock was taken: counts the contention on a primary (splitting its stream
  // past the threshold), or, once the stream is split, moves the thread to its slot shard.
  [[gnu::noinline]] void* allocate_contended(Shard& s, std::size_t bytes, std::size_t rounded) {
    const bool primary = s.thread_slot < 0 && e().thread_shards_mode != ThreadShards::off;
    if (primary && s.split.load(std::memory_order_acquire) && ThisThreadSlot::get() >= 0) {
      // Through the lookup, which checks the pool and caches what it finds.
      e().forget_cached_shard(s.stream);
      Shard* mine = e().shard_for(s.pool->id, s.stream);
      if (mine != &s) {
        mine->lock.lock();
        return e().serve(*mine, bytes, rounded);
      }
    }
    s.lock.lock();
    if (primary) {
      if (s.allocations - s.contention_window_start >= kContentionWindow) {
        s.contention_window_start = s.allocations;
        s.contentions = 0;
      }
      if (++s.contentions == kContentionsToSplit) s.split.store(true, std::memory_order_release);
    }
    return e().serve(s, bytes, rounded);
  }

  // Whether s's stream has other shards in its pool.
  static bool has_stream_siblings(const Shard& s) {
    return s.primary->slot_shard_count.load(std::memory_order_acquire) != 0;
  }

  // Serves `requester`'s request from a free block of another shard of its stream (no shard lock
  // held on entry); nullptr when none has one. `last_resort` (before an out-of-memory error):
  // waits for busy shards, and the take does not count towards the requester's growing its own
  // memory; otherwise a shard whose lock is taken is passed over, as the contention this
  // thread's own shard avoids.
  void* allocate_from_siblings(std::size_t bytes, Shard& requester, std::size_t rounded, bool expandable,
                               bool last_resort = false) {
    Pool& pool = *requester.pool;
    Shard& p = *requester.primary;
    std::lock_guard list_lock(pool.shards_mutex);  // then one shard lock at a time
    auto take_from = [&](Shard& t) -> void* {
      std::unique_lock lock(t.lock, std::defer_lock);
      if (last_resort) {
        lock.lock();
      } else if (!lock.try_lock()) {
        return nullptr;
      }
      e().settle_free_index(t);
      Block* b = e().find_free(t, rounded, expandable);
      if (!b) return nullptr;
      e().remove_free(t, b);
      if (!last_resort) requester.borrows_in_a_row.fetch_add(1, std::memory_order_relaxed);
      return e().take(t, b, rounded, bytes);
    };
    if (&p != &requester) {
      if (void* ptr = take_from(p)) return ptr;
    }
    for (Shard* t : p.slot_shards) {
      if (!t || t == &requester) continue;
      if (void* ptr = take_from(*t)) return ptr;
    }
    return nullptr;
  }

  // Whether s takes from its stream's other shards before growing.
  static bool may_take_from_siblings(const Shard& s) {
    return has_stream_siblings(s) && s.borrows_in_a_row.load(std::memory_order_relaxed) < kBorrowsBeforeGrowing;
  }
};

}  // namespace cudakit::memory::detail
