#pragma once
// MemorySupply: the caching allocator's memory obtained from and returned to its segment
// providers (expandable arenas and classic segments; See Note [Expandable arenas]), a part of
// its policy engine.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "cudakit/memory/segment_observer.hpp"
#include "cudakit/memory/segment_provider.hpp"
#include "memory/detail/arena.hpp"
#include "memory/detail/block.hpp"
#include "memory/detail/pool.hpp"
#include "memory/detail/request_sizes.hpp"
#include "memory/detail/shard.hpp"

namespace cudakit::memory::detail {

// Note [Expandable arenas]
// With expandable_segments (our default), each (pool, stream) owns one arena: a virtual
// address range as large as the device's memory, backed from its start by physical memory
// mapped on demand. A request that no free block can serve grows the arena at its end by just
// the missing bytes (rounded to the 2 MiB page), merging with a free tail block, so memory is
// never lost to the unused ends of fixed segments. Replaying recorded workloads, this brings
// peak reserved / peak allocated well under torch's (notes/figures.md, "The caching allocator").
// Getting memory from the driver costs tens to hundreds of microseconds per call whatever the
// size (cuMemCreate + cuMemMap + cuMemSetAccess, or cudaMalloc), so the arena grows in as few
// calls as the workload allows; empty_cache() unmaps only whole mapped chunks that lie in the
// free tail, after synchronizing the stream (the chunk may still be in use by queued work).
// Without expandable_segments the allocator behaves like torch's: a small pool of 2 MiB
// segments for requests up to 1 MiB, large_segment_size (20 MiB) segments for requests under
// 10 MiB, and 2 MiB-rounded segments above, each from SegmentProvider::allocate_segment
// (cudaMalloc).

// Note [Growing ahead]
// Each growth costs driver calls whatever its size (Note [Expandable arenas]), and a workload's
// first pass grows the arena in dozens of small steps (gpt_train: 121 steps of 2-24 MiB). When
// growths come in a streak (the previous one fewer than kGrowthStreak allocations ago), each maps
// ahead twice as much as the last, up to a fraction of what is mapped and 256 MiB; a growth after
// a quiet spell maps exactly what is missing. How far ahead depends on whether the shard is still
// filling its arena for the first time or churning through memory it already has, told apart by
// allocations served per mapped page (gpt_train stays under 2.4 for its whole first step;
// serve_kv passes 40 before its first long request), counted from when the arena was last empty:
// an arena that empty_cache() unmapped whole is filled again as the first time (counted from the
// shard's first allocation, a training loop's second step after empty_cache() read as churning
// from its first growth and took a third more growths, at more memory). While filling, growth
// goes on for a while, so a streak maps up to mapped/8; once churning, a growth is a new peak that
// will soon stop, and what is mapped past it stays reserved, so a streak maps up to mapped/16.
// gpt_train needs 34 growths (53 at mapped/16 throughout, 121 with no growing ahead) at 1.07 x
// peak allocated; serve_kv 27 at 1.14 (mapped/8 throughout would overshoot its last long growth:
// 1.24). Any switch point from 3 to 16 allocations per page gives the same figures on both traces.

// Note [No cache release during capture]
// Returning cached memory to the driver synchronizes (the device, then cudaFree or cuMemUnmap),
// which a stream capturing a CUDA graph does not allow: it would invalidate the capture. While
// the allocating stream captures, neither the garbage-collection threshold nor the
// free-and-retry before an out-of-memory error releases anything (torch skips both during
// capture too); the error says so.

// Note [A graph's pool keeps its free memory]
// A graph's kernels keep the addresses they were captured with. Memory a capture allocated and
// freed again before it ended (a cuBLAS or cuBLASLt workspace, a GEMV's partial sums, any
// temporary) is free in the graph's pool, yet every replay writes and reads it. Returning it to
// the driver (empty_cache(), which cudakit.graph and torch.cuda.graph call before each capture;
// the free-and-retry before an out-of-memory error; the garbage-collection threshold) would leave
// the graph's kernels working on freed memory, or on memory handed to someone else: the replays
// fault ("unspecified launch failure") or corrupt other data. So a pool that graphs hold
// (hold_pool, by their GraphPoolLease) keeps its cached memory until the last hold goes; then
// release_pool or the next empty_cache() returns it. torch does the same: its emptyCache frees a
// private pool's blocks only once no graph uses the pool (graph_pools_freeable).

// See Note [Growing ahead].
inline constexpr std::uint64_t kGrowthStreak = 64;           // allocations between growths in a streak
inline constexpr std::size_t kAheadFractionFilling = 8;      // ahead at most mapped / 8 while filling,
inline constexpr std::size_t kAheadFractionChurning = 16;    // mapped / 16 once churning,
inline constexpr std::size_t kAheadMax = std::size_t{256} << 20;  // and at most 256 MiB
inline constexpr std::uint64_t kChurningAllocationsPerPage = 8;  // churning: this many per mapped page


// The supply part of the caching allocator's Engine, which derives from it (CRTP; See Note
// [Allocator internals are hidden] in block.hpp). Every shard passed in is locked.
// Note [A pool's allocator calling back]
// A pool's segment provider may run the user's allocation functions (MemPool(allocator=...)), and
// those may allocate through cudakit again (a CUDAPluggableAllocator over cudakit's own functions,
// whose requests go to the thread's current pool). The provider runs with the pool's shard locked,
// so a request to that same pool would wait for ever on the lock its own thread holds. While a
// provider supplies a pool on this thread, that pool is here, and allocate() serves a request
// for it from the default pool instead (the user's function wanted device memory, not that
// pool's); a default pool whose provider calls back into itself is refused with an error.
[[gnu::tls_model("initial-exec")]] inline thread_local const Pool* t_pool_being_supplied = nullptr;

template <class Engine>
struct [[gnu::visibility("hidden")]] MemorySupply {
  Engine& e() noexcept { return static_cast<Engine&>(*this); }
  const Engine& e() const noexcept { return static_cast<const Engine&>(*this); }

  // Tells the segment observers (See Note [Segment observers' locks]); `only` limits it to one.
  void report_segment(SegmentEvent::Kind kind, const Shard& s, void* base, std::size_t bytes, bool expandable,
                      std::uint64_t only = 0) const noexcept {
    if (!e().segment_observers.any()) return;
    e().segment_observers.notify(SegmentEvent{kind, e().device, base, bytes, expandable, s.pool->id, s.stream}, only);
  }
  // Every range `s` has mapped now, as `kind` events (attach's replay, the destructor's release).
  void report_all_segments(SegmentEvent::Kind kind, const Shard& s, std::uint64_t only = 0) const noexcept {
    for (const auto& a : s.arenas) {
      if (!a->expandable) {
        report_segment(kind, s, a->base, a->mapped, false, only);
        continue;
      }
      std::size_t offset = 0;
      for (std::size_t chunk : a->chunks) {
        report_segment(kind, s, a->base + offset, chunk, true, only);
        offset += chunk;
      }
    }
  }

  bool may_reserve(const Pool& pool, std::size_t bytes) const {
    if (e().config.per_process_memory_fraction >= 1.0) return true;
    return e().reserved.total() + bytes <= detail::allowed_bytes(pool, e().config);
  }

  void count_reserved(Shard& s, std::size_t bytes, bool small, bool add) {
    const auto n = static_cast<std::int64_t>(bytes);
    const int pi = small ? 1 : 2;
    e().count(s, [&](auto& m, bool) {
      for (int i : {0, pi}) {
        if (add) {
          m.reserved_bytes[i].increase(n);
          m.segment[i].increase(1);
        } else {
          m.reserved_bytes[i].decrease(n);
          m.segment[i].decrease(1);
        }
      }
    });
    if (add) {
      e().reserved.add(bytes);
      ++s.stats.num_device_alloc;
    } else {
      e().reserved.remove(bytes);
      ++s.stats.num_device_free;
    }
  }

  // Grows the shard's arena so that a free tail block of at least `size` exists; returns it.
  Block* grow_arena(Shard& s, std::size_t size) {
    SegmentProvider& provider = *s.pool->provider;
    const std::size_t page = provider.page_size();
    Arena* a = s.arena;
    if (!a) {
      const std::size_t range = round_up(provider.total_memory(), page);
      void* base = provider.reserve_range(range);
      if (!base) return nullptr;
      s.arenas.push_back(std::make_unique<Arena>());
      a = s.arenas.back().get();
      a->base = static_cast<char*>(base);
      a->range = range;
      a->expandable = true;
      a->shard = &s;
      s.arena = a;
      e().arena_table.insert(a);
    }
    // The recent slot is empty here (allocate flushes it before searching), so a free tail is
    // in the index.
    Block* tail = a->last && a->last->state == Block::State::free ? a->last : nullptr;
    const std::size_t have = tail ? tail->size : 0;
    std::size_t grow = round_up(size - have, page);
    if (s.last_growth_at != 0 && s.allocations - s.last_growth_at <= kGrowthStreak) {
      const bool churning = s.allocations - s.filling_since >= kChurningAllocationsPerPage * (a->mapped / page);
      const std::size_t fraction = churning ? kAheadFractionChurning : kAheadFractionFilling;
      s.ahead = std::min({std::max(2 * s.ahead, page), kAheadMax, round_up(a->mapped / fraction, page)});
    } else {
      s.ahead = 0;
    }
    s.last_growth_at = s.allocations;
    grow = std::max(grow, s.ahead);
    if (a->mapped + grow > a->range) return nullptr;
    if (!may_reserve(*s.pool, grow)) return nullptr;
    if (!provider.map(a->base + a->mapped, grow)) return nullptr;
    e().history.trace(TraceEntry::Action::segment_map, a->base + a->mapped, grow, s.stream);
    report_segment(SegmentEvent::Kind::mapped, s, a->base + a->mapped, grow, true);
    count_reserved(s, grow, false, true);
    a->chunks.push_back(grow);
    if (tail) {
      e().remove_free(s, tail);
      tail->size += grow;
    } else {
      tail = s.new_block();
      tail->ptr = a->base + a->mapped;
      tail->size = grow;
      tail->arena = a;
      tail->prev = a->last;
      if (a->last) a->last->next = tail;
      else a->first = tail;
      a->last = tail;
    }
    a->mapped += grow;
    return tail;  // not indexed: the caller takes it
  }

  // A new classic segment holding one free block of the segment size (not indexed).
  Block* new_segment(Shard& s, std::size_t rounded) {
    const bool small = rounded <= kSmallRequest;
    const std::size_t bytes = small ? kSmallSegment
                              : rounded < kMediumLimit ? e().config.large_segment_size
                                                       : round_up(rounded, kSegmentRound);
    if (!may_reserve(*s.pool, bytes)) return nullptr;
    void* p = nullptr;
    {
      // See Note [A pool's allocator calling back].
      const Pool* outer = std::exchange(t_pool_being_supplied, s.pool);
      struct Restore {
        const Pool* outer;
        ~Restore() { t_pool_being_supplied = outer; }
      } restore{outer};
      p = s.pool->provider->allocate_segment(bytes, s.stream);
    }
    if (!p) return nullptr;
    e().history.trace(TraceEntry::Action::segment_alloc, p, bytes, s.stream);
    report_segment(SegmentEvent::Kind::mapped, s, p, bytes, false);
    count_reserved(s, bytes, small, true);
    s.arenas.push_back(std::make_unique<Arena>());
    Arena* a = s.arenas.back().get();
    a->oversize = !small && bytes > e().config.max_split_size;  // See Note [Changing settings].
    if (a->oversize) e().count(s, [](auto& m, bool) { m.oversize_segments.increase(1); });
    a->base = static_cast<char*>(p);
    a->range = a->mapped = bytes;
    a->small = small;
    a->shard = &s;
    Block* b = s.new_block();
    b->ptr = a->base;
    b->size = bytes;
    b->arena = a;
    a->first = a->last = b;
    e().arena_table.insert(a);
    return b;
  }

  // Returns cached memory of one shard to its provider (shard locked).
  void release_cached(Shard& s, bool wait_pending) {
    e().flush_recent(s);
    if (s.pending_frees.any_deferred()) s.pending_frees.record_deferred(*e().events);
    if (wait_pending) {
      e().complete_pending(s, true);
      e().wait_awaiting(s);
    }
    SegmentProvider& provider = *s.pool->provider;
    bool synchronized = false;
    auto sync_once = [&] {
      if (!synchronized) provider.synchronize(s.stream);
      synchronized = true;
    };
    for (auto it = s.arenas.begin(); it != s.arenas.end();) {
      Arena* a = it->get();
      if (a->expandable) {
        // Unmap whole chunks lying in the free tail.
        while (!a->chunks.empty() && a->last && a->last->state == Block::State::free &&
               a->last->size >= a->chunks.back()) {
          sync_once();
          Block* tail = a->last;
          const std::size_t chunk = a->chunks.back();
          e().remove_free(s, tail);
          a->mapped -= chunk;
          report_segment(SegmentEvent::Kind::unmapping, s, a->base + a->mapped, chunk, true);
          provider.unmap(a->base + a->mapped, chunk);
          e().history.trace(TraceEntry::Action::segment_unmap, a->base + a->mapped, chunk, s.stream);
          count_reserved(s, chunk, false, false);
          a->chunks.pop_back();
          tail->size -= chunk;
          if (tail->size == 0) {
            a->last = tail->prev;
            if (a->last) a->last->next = nullptr;
            else a->first = nullptr;
            s.recycle(tail);
          } else {
            e().insert_free(s, tail);
          }
        }
        if (a->mapped == 0) {
          // Emptied: what comes next fills it again, as the first time (See Note [Growing ahead]).
          s.filling_since = s.allocations;
          s.last_growth_at = 0;
          s.ahead = 0;
        }
        ++it;
        continue;
      }
      Block* only = a->first;
      if (only && !only->next && only->state == Block::State::free) {
        sync_once();
        e().remove_free(s, only);
        e().arena_table.erase(a);
        report_segment(SegmentEvent::Kind::unmapping, s, a->base, a->mapped, false);
        provider.free_segment(a->base, a->mapped, s.stream);
        e().history.trace(TraceEntry::Action::segment_free, a->base, a->mapped, s.stream);
        count_reserved(s, a->mapped, a->small, false);
        if (a->oversize) e().count(s, [](auto& m, bool) { m.oversize_segments.decrease(1); });
        s.recycle(only);
        it = s.arenas.erase(it);
        continue;
      }
      ++it;
    }
  }

  // Every pool's cached memory but that of pools graphs hold (See Note [A graph's pool keeps its
  // free memory]).
  void release_all_cached() {
    e().sync_all.fetch_add(1);
    e().for_each_shard([&](Shard& s) {
      if (s.pool->held()) return;
      std::lock_guard lock(s.lock);
      release_cached(s, true);
    });
  }
};

}  // namespace cudakit::memory::detail
