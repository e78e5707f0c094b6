#include "cudakit/memory/caching_allocator.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdio>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/core/log.hpp"
#include "memory/detail/arena_table.hpp"
#include "memory/detail/device_peaks.hpp"
#include "memory/detail/history.hpp"
#include "memory/detail/oom_observers.hpp"
#include "memory/detail/oom_report.hpp"
#include "memory/detail/pool.hpp"
#include "memory/detail/shard.hpp"

namespace cudakit::memory {
using cudakit::detail::concat;
using detail::Arena;
using detail::Block;
using detail::kRound;
using detail::Pool;
using detail::Shard;

// Note [Expandable arenas]
// With expandable_segments (our default), each (pool, stream) owns one arena: a virtual
// address range as large as the device's memory, backed from its start by physical memory
// mapped on demand. A request that no free block can serve grows the arena at its end by just
// the missing bytes (rounded to the 2 MiB page), merging with a free tail block, so memory is
// never lost to the unused ends of fixed segments. Replaying recorded workloads, this cuts
// peak reserved / peak allocated from torch's 1.17 and 1.61 to about 1.13 (bench/README).
// Getting memory from the driver costs ~30-170 us per call whatever the size (measured on an
// H200: cuMemCreate + cuMemMap + cuMemSetAccess, or cudaMalloc), so the arena grows in as few
// calls as the workload allows; empty_cache() unmaps only whole mapped chunks that lie in the
// free tail, after synchronizing the stream (the chunk may still be in use by queued work).
// Without expandable_segments the allocator behaves like torch's: a small pool of 2 MiB
// segments for requests up to 1 MiB, 20 MiB segments for requests up to 10 MiB, and
// 2 MiB-rounded segments above, each from SegmentProvider::allocate_segment (cudaMalloc).

namespace {

constexpr std::size_t kSmallRequest = 1u << 20;     // requests up to this are "small"
constexpr std::size_t kSmallSegment = 2u << 20;     // classic small-pool segment
constexpr std::size_t kMediumSegment = 20u << 20;   // classic segment for requests < 10 MiB
constexpr std::size_t kMediumLimit = 10u << 20;
constexpr std::size_t kSegmentRound = 2u << 20;
// See Note [Growing ahead].
constexpr std::uint64_t kGrowthStreak = 64;           // allocations between growths in a streak
constexpr std::size_t kAheadFractionFilling = 8;      // ahead at most mapped / 8 while filling,
constexpr std::size_t kAheadFractionChurning = 16;    // mapped / 16 once churning,
constexpr std::size_t kAheadMax = std::size_t{256} << 20;  // and at most 256 MiB
constexpr std::uint64_t kChurningAllocationsPerPage = 8;  // churning: this many per mapped page

std::size_t round_up(std::size_t n, std::size_t m) { return (n + m - 1) / m * m; }

int pool_index(std::size_t rounded) { return rounded <= kSmallRequest ? 1 : 2; }

// MemoryStats::max_split_size: -1 for no limit.
std::int64_t max_split_stat(const AllocatorConfig& config) {
  return config.max_split_size == std::numeric_limits<std::size_t>::max()
             ? -1
             : static_cast<std::int64_t>(config.max_split_size);
}

// Note [Growing ahead]
// Each growth costs 30-170 us of driver calls whatever its size, and a workload's first pass
// grows the arena in dozens of small steps (gpt_train: 121 steps of 2-24 MiB). When growths come
// in a streak (the previous one fewer than kGrowthStreak allocations ago), each maps ahead twice
// as much as the last, up to a fraction of what is mapped and 256 MiB; a growth after a quiet
// spell maps exactly what is missing. How far ahead depends on whether the shard is still
// filling its arena for the first time or churning through memory it already has, told apart
// by allocations served per mapped page (gpt_train stays under 2.4 for its whole first step;
// serve_kv passes 40 before its first long request). While filling, growth goes on for a while,
// so a streak maps up to mapped/8; once churning, a growth is a new peak that will soon stop,
// and what is mapped past it stays reserved, so a streak maps up to mapped/16. gpt_train needs
// 34 growths (53 at mapped/16 throughout, 121 with no growing ahead) at 1.07 x peak allocated;
// serve_kv 27 at 1.14 (mapped/8 throughout would overshoot its last long growth: 1.24). Any
// switch point from 3 to 16 allocations per page gives the same figures on both traces.

// Note [Recently freed block]
// The commonest pattern is an allocation freed and the same size asked for again at once
// (temporaries in a loop). Splitting it off a free block and merging it back each time costs
// more than the rest of the fast path, so a freed block first waits, unmerged but counted as
// free, in its shard's `recent` slot: an allocation of exactly its size takes it back directly;
// anything else that needs the free index first returns it there (merging it as usual), so the
// slot never holds memory that a search could have used.

// Note [Active mirrors allocated]
// A block stays active after its free only while events recorded on the other streams that
// record_stream() named are pending; until a shard's first such record_stream(), its active and
// active_bytes statistics equal allocation and allocated_bytes in every field. So the fast path
// does not maintain them (four of the twenty counter updates of an alloc+free pair): stats()
// reads allocation in their place, and that first record_stream() copies allocation into active
// once, after which both are kept separately.

// Note [No cache release during capture]
// Returning cached memory to the driver synchronizes (the device, then cudaFree or cuMemUnmap),
// which a stream capturing a CUDA graph does not allow: it would invalidate the capture. While
// the allocating stream captures, neither the garbage-collection threshold nor the
// free-and-retry before an out-of-memory error releases anything (torch skips both during
// capture too); the error says so.

std::atomic<std::uint64_t> g_instance_counter{1};
std::atomic<std::uint64_t> g_pool_counter{1};

struct ShardCache {
  std::uint64_t instance = 0;
  std::uint64_t generation = 0;
  PoolId pool;
  StreamKey stream = 0;
  Shard* shard = nullptr;
};
// initial-exec: reached at a fixed offset from the thread pointer. The default model for a
// shared library calls __tls_get_addr on every allocation (11 of ~460 instructions per
// operation replaying serve_kv). It takes 40 bytes of the static TLS that glibc keeps spare for
// libraries loaded with dlopen, as allocators such as jemalloc do.
[[gnu::tls_model("initial-exec")]] thread_local ShardCache t_shard_cache;

// The allocator's state and its policy. In this file's anonymous namespace, so that its
// functions are local: GCC sees every call of them and inlines the fast path as it needs (See
// Note [Allocator internals are hidden] in detail/block.hpp).
struct Engine {
  int device;
  std::shared_ptr<SegmentProvider> default_provider;
  std::shared_ptr<StreamEvents> events;
  AllocatorConfig config;
  // Any roundup_power2_divisions entry above 1: checked first so that the default costs one
  // branch per allocation.
  bool rounds_to_divisions = false;
  const std::uint64_t instance = g_instance_counter.fetch_add(1);
  std::atomic<std::uint64_t> generation{1};

  mutable std::mutex pools_mutex;
  std::map<PoolId, std::unique_ptr<Pool>> pools;

  // See Note [Shards and statistics] in detail/shard.hpp.
  detail::ArenaTable arena_table;

  // See Note [Device-wide peaks] in detail/device_peaks.hpp.
  detail::ReservedBytes reserved;
  detail::AllocationGrants grants;
  alignas(128) std::atomic<std::int64_t> ooms{0};
  std::atomic<std::int64_t> retries{0};
  std::atomic<std::int64_t> sync_all{0};

  detail::OomObservers oom_observers;
  detail::History history;

  Engine(int dev, std::shared_ptr<SegmentProvider> provider, std::shared_ptr<StreamEvents> ev,
         AllocatorConfig cfg)
      : device(dev), default_provider(std::move(provider)), events(std::move(ev)), config(cfg) {
    rounds_to_divisions = std::any_of(config.roundup_power2_divisions.begin(), config.roundup_power2_divisions.end(),
                                      [](unsigned d) { return d > 1; });
    if (!default_provider || !events) {
      throw InvalidArgumentError("CachingAllocator", "a segment provider and an event source are required");
    }
    if (config.expandable_segments && default_provider->page_size() == 0) {
      // The provider cannot map on demand (e.g. user allocation functions): fixed segments.
      config.expandable_segments = false;
    }
    pools.emplace(PoolId{}, make_pool(PoolId{}, default_provider));
  }

  // ---- pools and shards ----
  Pool* find_pool(PoolId id) const {
    std::lock_guard lock(pools_mutex);
    auto it = pools.find(id);
    return it == pools.end() || it->second->released ? nullptr : it->second.get();
  }

  Shard* shard_for(PoolId pool_id, StreamKey stream) {
    ShardCache& c = t_shard_cache;
    const std::uint64_t gen = generation.load(std::memory_order_acquire);
    if (c.instance == instance && c.generation == gen && c.stream == stream && c.pool == pool_id) {
      return c.shard;
    }
    Pool* pool = find_pool(pool_id);
    if (!pool) {
      throw InvalidArgumentError("CachingAllocator::allocate",
                                 concat("memory pool (", pool_id.first, ", ", pool_id.second,
                                                ") does not exist or was released"));
    }
    auto find = [&]() -> Shard* {
      std::lock_guard lock(pool->shards_mutex);
      for (auto& s : pool->shards) {
        if (s->stream == stream) return s.get();
      }
      return nullptr;
    };
    Shard* shard = find();
    if (!shard) {
      std::lock_guard creating(grants.creation_mutex());
      shard = find();
      if (!shard) {
        if (grants.count_shard()) start_grants();  // See Note [Device-wide peaks].
        std::lock_guard lock(pool->shards_mutex);
        pool->shards.push_back(std::make_unique<Shard>());
        pool->shard_count.store(pool->shards.size(), std::memory_order_relaxed);
        shard = pool->shards.back().get();
        shard->pool = pool;
        shard->stream = stream;
        shard->stats.max_split_size = max_split_stat(config);
      }
    }
    c = ShardCache{instance, gen, pool_id, stream, shard};
    return shard;
  }

  // Every shard of every pool, gathered under the pools' locks.
  std::vector<Shard*> all_shards() const {
    std::vector<Shard*> all;
    std::lock_guard lock(pools_mutex);
    for (auto& [id, pool] : pools) {
      std::lock_guard shards_lock(pool->shards_mutex);
      for (auto& s : pool->shards) all.push_back(s.get());
    }
    return all;
  }

  template <class F>
  void for_each_shard(F&& f) const {
    for (Shard* s : all_shards()) f(*s);
  }

  std::unique_ptr<Pool> make_pool(PoolId id, std::shared_ptr<SegmentProvider> provider) const {
    auto pool = std::make_unique<Pool>();
    pool->id = id;
    pool->expandable = config.expandable_segments && provider->page_size() != 0;
    pool->provider = std::move(provider);
    return pool;
  }

  // Starts keeping grants as the second shard is created (the creation mutex held, so the
  // one existing shard is all there is). See Note [Device-wide peaks].
  void start_grants() {
    for_each_shard([&](Shard& s) {
      std::lock_guard lock(s.lock);
      grants.start(s.granted, s.stats.allocated_bytes[0]);
    });
  }

  // ---- sizes ----
  std::size_t round_request(std::size_t bytes) const {
    std::size_t r = round_up(bytes, kRound);
    if (rounds_to_divisions) [[unlikely]] {
      // torch's rule: d equal steps between the powers of two around r, once r exceeds 512 * d.
      const std::size_t d = config.roundup_divisions(r);
      if (d > 1 && r > kRound * d) {
        const std::size_t p = std::size_t{1} << (std::bit_width(r) - 1);
        r = round_up(r, std::max(kRound, p / d));
      }
    }
    return r;
  }

  // ---- obtaining and returning memory (shard locked) ----
  bool may_reserve(const Pool& pool, std::size_t bytes) const {
    if (config.per_process_memory_fraction >= 1.0) return true;
    return reserved.total() + bytes <= detail::allowed_bytes(pool, config);
  }

  void count_reserved(Shard& s, std::size_t bytes, bool small, bool add) {
    const auto n = static_cast<std::int64_t>(bytes);
    const int pi = small ? 1 : 2;
    for (int i : {0, pi}) {
      if (add) {
        s.stats.reserved_bytes[i].increase(n);
        s.stats.segment[i].increase(1);
      } else {
        s.stats.reserved_bytes[i].decrease(n);
        s.stats.segment[i].decrease(1);
      }
    }
    if (add) {
      reserved.add(bytes);
      ++s.stats.num_device_alloc;
    } else {
      reserved.remove(bytes);
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
      arena_table.insert(a);
    }
    // The recent slot is empty here (allocate flushes it before searching), so a free tail is
    // in the index.
    Block* tail = a->last && a->last->state == Block::State::free ? a->last : nullptr;
    const std::size_t have = tail ? tail->size : 0;
    std::size_t grow = round_up(size - have, page);
    if (s.last_growth_at != 0 && s.allocations - s.last_growth_at <= kGrowthStreak) {
      const bool churning = s.allocations >= kChurningAllocationsPerPage * (a->mapped / page);
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
    history.trace(TraceEntry::Action::segment_map, a->base + a->mapped, grow, s.stream);
    count_reserved(s, grow, false, true);
    a->chunks.push_back(grow);
    if (tail) {
      remove_free(s, tail);
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
                              : rounded < kMediumLimit ? kMediumSegment
                                                       : round_up(rounded, kSegmentRound);
    if (!may_reserve(*s.pool, bytes)) return nullptr;
    void* p = s.pool->provider->allocate_segment(bytes, s.stream);
    if (!p) return nullptr;
    history.trace(TraceEntry::Action::segment_alloc, p, bytes, s.stream);
    count_reserved(s, bytes, small, true);
    if (!small && bytes > config.max_split_size) s.stats.oversize_segments.increase(1);
    s.arenas.push_back(std::make_unique<Arena>());
    Arena* a = s.arenas.back().get();
    a->base = static_cast<char*>(p);
    a->range = a->mapped = bytes;
    a->small = small;
    a->shard = &s;
    Block* b = s.new_block();
    b->ptr = a->base;
    b->size = bytes;
    b->arena = a;
    a->first = a->last = b;
    arena_table.insert(a);
    return b;
  }

  // ---- free blocks (shard locked) ----
  detail::FreeIndex& index_for(Shard& s, const Arena& a) {
    return !a.expandable && a.small ? s.small_index : s.large_index;
  }
  static bool is_split(const Block* b) { return b->prev || b->next; }

  void insert_free(Shard& s, Block* b) {
    index_for(s, *b->arena).insert(b);
    if (is_split(b)) {
      const int pi = pool_index(b->size);
      for (int i : {0, pi}) {
        s.stats.inactive_split[i].increase(1);
        s.stats.inactive_split_bytes[i].increase(static_cast<std::int64_t>(b->size));
      }
    }
  }
  void remove_free(Shard& s, Block* b) {
    index_for(s, *b->arena).remove(b);
    if (is_split(b)) {
      const int pi = pool_index(b->size);
      for (int i : {0, pi}) {
        s.stats.inactive_split[i].decrease(1);
        s.stats.inactive_split_bytes[i].decrease(static_cast<std::int64_t>(b->size));
      }
    }
  }

  // The best free block for `rounded` bytes among those `usable` accepts.
  template <class Usable = decltype([](const Block*) { return true; })>
  Block* find_free(Shard& s, std::size_t rounded, bool expandable, Usable&& usable = {}) {
    if (expandable) return s.large_index.find(rounded, usable);
    if (rounded <= kSmallRequest) return s.small_index.find(rounded, usable);
    const std::size_t max_split = config.max_split_size;
    return s.large_index.find(rounded, [&](const Block* b) {
      // torch's rules: small requests don't take oversize blocks; oversize requests take an
      // oversize block only if it wastes less than max_non_split_rounding (20 MiB by default).
      if (rounded < max_split && b->size >= max_split) return false;
      if (rounded >= max_split && b->size >= rounded + config.max_non_split_rounding) return false;
      return usable(b);
    });
  }

  bool should_split(const Block* b, std::size_t rounded) const {
    const std::size_t remaining = b->size - rounded;
    if (b->arena->expandable || b->arena->small) return remaining >= kRound;
    return rounded < config.max_split_size && remaining > kSmallRequest;
  }

  // Returns a block to the free index, merging it with free neighbours.
  void free_block(Shard& s, Block* b) {
    // A neighbour waiting unmerged in the recent slot is merged first, so that free blocks are
    // never left side by side.
    if (s.recent && (s.recent == b->prev || s.recent == b->next)) flush_recent(s);
    b->state = Block::State::free;
    b->borrower = nullptr;
    b->extra_streams.clear();
    b->frames.reset();
    for (Block* n : {b->prev, b->next}) {
      if (!n || n->state != Block::State::free) continue;
      remove_free(s, n);
      // The merged block is as busy as the later of the two frees.
      b->freed_at = n->freed_at = std::max(b->freed_at, n->freed_at);
      if (n == b->prev) {
        n->size += b->size;
        n->next = b->next;
        if (b->next) b->next->prev = n;
        if (b->arena->last == b) b->arena->last = n;
        s.recycle(b);
        b = n;
      } else {
        b->size += n->size;
        b->next = n->next;
        if (n->next) n->next->prev = b;
        if (b->arena->last == n) b->arena->last = b;
        s.recycle(n);
      }
    }
    insert_free(s, b);
  }

  // Frees the pending blocks whose streams' work has finished (waiting for it if `wait`).
  void complete_pending(Shard& s, bool wait) {
    s.pending_frees.complete(*events, wait, [&](Block* b) {
      account_inactive(s, b);
      history.trace(TraceEntry::Action::free_completed, b->ptr, b->size, s.stream);
      free_block(s, b);
    });
  }

  // From now on active and allocation may part (See Note [Active mirrors allocated]).
  static void stop_mirroring_active(Shard& s) {
    if (!s.active_mirrors_allocation) return;
    s.stats.active = s.stats.allocation;
    s.stats.active_bytes = s.stats.allocated_bytes;
    s.active_mirrors_allocation = false;
  }

  // active_* fall when a block stops being active (freed, or its pending events completed).
  void account_inactive(Shard& s, const Block* b) {
    if (s.active_mirrors_allocation) return;  // See Note [Active mirrors allocated].
    const int pi = pool_index(b->size);
    for (int i : {0, pi}) {
      s.stats.active[i].decrease(1);
      s.stats.active_bytes[i].decrease(static_cast<std::int64_t>(b->size));
    }
  }

  // Returns cached memory of one shard to its provider (shard locked).
  void release_cached(Shard& s, bool wait_pending) {
    flush_recent(s);
    if (s.pending_frees.any_deferred()) s.pending_frees.record_deferred(*events);
    if (wait_pending) {
      complete_pending(s, true);
      wait_awaiting(s);
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
          remove_free(s, tail);
          a->mapped -= chunk;
          provider.unmap(a->base + a->mapped, chunk);
          history.trace(TraceEntry::Action::segment_unmap, a->base + a->mapped, chunk, s.stream);
          count_reserved(s, chunk, false, false);
          a->chunks.pop_back();
          tail->size -= chunk;
          if (tail->size == 0) {
            a->last = tail->prev;
            if (a->last) a->last->next = nullptr;
            else a->first = nullptr;
            s.recycle(tail);
          } else {
            insert_free(s, tail);
          }
        }
        ++it;
        continue;
      }
      Block* only = a->first;
      if (only && !only->next && only->state == Block::State::free) {
        sync_once();
        remove_free(s, only);
        arena_table.erase(a);
        provider.free_segment(a->base, a->mapped, s.stream);
        history.trace(TraceEntry::Action::segment_free, a->base, a->mapped, s.stream);
        count_reserved(s, a->mapped, a->small, false);
        if (!a->small && a->mapped > config.max_split_size) s.stats.oversize_segments.decrease(1);
        s.recycle(only);
        it = s.arenas.erase(it);
        continue;
      }
      ++it;
    }
  }

  void release_all_cached() {
    sync_all.fetch_add(1);
    for_each_shard([&](Shard& s) {
      std::lock_guard lock(s.lock);
      release_cached(s, true);
    });
  }

  // Returns the recently freed block to the free index (shard locked).
  void flush_recent(Shard& s) {
    if (Block* b = std::exchange(s.recent, nullptr)) free_block(s, b);
  }

  // ---- serving requests ----
  void* allocate(std::size_t bytes, StreamKey stream, PoolId pool_id) {
    if (bytes == 0) return nullptr;
    Shard& s = *shard_for(pool_id, stream);
    const std::size_t rounded = round_request(bytes);
    s.lock.lock();
    if (s.pending_frees.any_deferred()) [[unlikely]] s.pending_frees.record_deferred(*events);
    if (s.pending_frees.any_pending()) complete_pending(s, false);
    if (s.awaiting_count) [[unlikely]] complete_awaiting(s, true);
    if (s.recent && s.recent->size == rounded) {
      Block* b = std::exchange(s.recent, nullptr);
      void* p = take(s, b, rounded, bytes);
      s.lock.unlock();
      return p;
    }
    const bool expandable = s.pool->expandable;
    flush_recent(s);
    Block* b = find_free(s, rounded, expandable);
    if (b) {
      remove_free(s, b);
    } else {
      if (s.awaiting_count) {
        complete_awaiting(s, true);  // what this shard lent may be back
        flush_recent(s);
        b = find_free(s, rounded, expandable);
      }
      if (b) {
        remove_free(s, b);
      } else if (may_borrow(s)) {
        const std::size_t own_tail = free_tail_bytes(s);
        s.lock.unlock();
        if (void* p = allocate_elsewhere(bytes, s, rounded, expandable, own_tail)) return p;
        s.lock.lock();
        flush_recent(s);
        b = find_free(s, rounded, expandable);  // freed here meanwhile
        if (b) remove_free(s, b);
      }
      if (!b) b = obtain(s, rounded, expandable);
      if (!b) {
        s.lock.unlock();
        return allocate_after_release(bytes, s, rounded, expandable);
      }
    }
    void* p = take(s, b, rounded, bytes);
    s.lock.unlock();
    return p;
  }

  // ---- memory across streams (See Note [Memory across streams]) ----
  bool may_borrow(const Shard& s) const {
    return config.cross_stream_reuse != CrossStreamReuse::off &&
           s.pool->shard_count.load(std::memory_order_relaxed) > 1 && !events->capturing(s.stream);
  }

  // Bytes of the free block at the end of the shard's expandable arena (shard locked).
  static std::size_t free_tail_bytes(const Shard& s) {
    const Block* tail = s.arena ? s.arena->last : nullptr;
    return tail && tail->state == Block::State::free ? tail->size : 0;
  }

  // Serves `requester`'s request from another stream's shard of the same pool, with no shard
  // lock held on entry: a free block whose last use has finished (or, with `dependencies`, one
  // the requesting stream is made to wait for), else growing the expandable arena whose free
  // tail is largest, when that is another stream's. nullptr: the requester grows its own.
  void* allocate_elsewhere(std::size_t bytes, Shard& requester, std::size_t rounded, bool expandable,
                           std::size_t own_tail) {
    Pool& pool = *requester.pool;
    std::lock_guard list_lock(pool.shards_mutex);  // then one shard lock at a time
    Shard* grow_in = nullptr;
    std::size_t largest_tail = own_tail;
    for (auto& owner : pool.shards) {
      Shard& t = *owner;
      if (&t == &requester) continue;
      std::lock_guard lock(t.lock);
      flush_recent(t);
      if (t.pending_frees.any_deferred()) t.pending_frees.record_deferred(*events);
      if (t.pending_frees.any_pending()) complete_pending(t, false);
      if (t.awaiting_count) complete_awaiting(t, true);
      if (Block* b = find_lendable(t, requester, rounded, expandable)) {
        remove_free(t, b);
        return lend(t, b, requester, rounded, bytes);
      }
      const Block* tail = expandable && t.arena ? t.arena->last : nullptr;
      if (tail && tail->state == Block::State::free && t.marks.covers(tail->freed_at) && tail->size > largest_tail) {
        largest_tail = tail->size;
        grow_in = &t;
      }
    }
    if (!grow_in) return nullptr;
    Shard& t = *grow_in;
    std::lock_guard lock(t.lock);
    flush_recent(t);
    const Block* tail = t.arena ? t.arena->last : nullptr;
    if (!tail || tail->state != Block::State::free || !t.marks.covers(tail->freed_at)) return nullptr;
    Block* b = grow_arena(t, rounded);
    return b ? lend(t, b, requester, rounded, bytes) : nullptr;
  }

  // A free block of shard `t` that `requester` may use now (shard t locked).
  Block* find_lendable(Shard& t, Shard& requester, std::size_t rounded, bool expandable) {
    if (Block* b = find_free(t, rounded, expandable, [&](const Block* c) { return t.marks.covers(c->freed_at); })) {
      return b;
    }
    // The best fit regardless; whether its last use on t's stream has finished, the marks say.
    Block* b = find_free(t, rounded, expandable);
    if (!b) return nullptr;
    if (t.marks.poll(*events, t.stream, b->freed_at)) return b;
    if (config.cross_stream_reuse != CrossStreamReuse::dependencies || events->capturing(t.stream)) return nullptr;
    events->make_wait(requester.stream, t.marks.covering_mark(*events, t.stream, b->freed_at));
    return b;
  }

  // A lent block's free waits for its borrower's marks (shard t locked).
  void await_borrower(Shard& t, Block* b) {
    Shard* user = b->borrower;
    auto q = std::find_if(t.awaiting.begin(), t.awaiting.end(), [&](const Shard::AwaitingFrees& a) { return a.user == user; });
    if (q == t.awaiting.end()) q = t.awaiting.insert(t.awaiting.end(), Shard::AwaitingFrees{user, {}});
    q->frees.push_back(Shard::AwaitingFree{b, user->marks.stamp()});
    ++t.awaiting_count;
  }

  // Completes the frees of lent blocks whose borrowers' marks cover them (shard t locked). With
  // `advance`, first polls the marks of a borrower that is behind, if its lock is free (never
  // waiting for it while holding t's: any order of two shard locks could deadlock).
  void complete_awaiting(Shard& t, bool advance) {
    for (auto& q : t.awaiting) {
      if (q.frees.empty()) continue;
      Shard& user = *q.user;
      if (advance && !user.marks.covers(q.frees.front().stamp) && user.lock.try_lock()) {
        try {
          user.marks.poll(*events, user.stream, q.frees.back().stamp);
        } catch (...) {
          user.lock.unlock();
          throw;
        }
        user.lock.unlock();
      }
      while (!q.frees.empty() && user.marks.covers(q.frees.front().stamp)) {
        finish_awaited(t, q.frees.front().block);
        q.frees.pop_front();
      }
    }
  }

  // Waits for every lent block's borrower (shard t locked; releasing cached memory).
  void wait_awaiting(Shard& t) {
    if (!t.awaiting_count) return;
    t.pool->provider->synchronize(t.stream);  // all work, whichever streams are still alive
    for (auto& q : t.awaiting) {
      for (const auto& f : q.frees) finish_awaited(t, f.block);
      q.frees.clear();
    }
  }

  void finish_awaited(Shard& t, Block* b) {
    --t.awaiting_count;
    account_inactive(t, b);
    history.trace(TraceEntry::Action::free_completed, b->ptr, b->size, t.stream);
    free_block(t, b);
  }

  // Gives free block `b` of shard `t` (not indexed) to `requester`: it stays t's (its arena's
  // shard frees it), and its free waits for the requester's work, as record_stream does.
  void* lend(Shard& t, Block* b, Shard& requester, std::size_t rounded, std::size_t bytes) {
    stop_mirroring_active(t);  // lent blocks are freed pending (Note [Active mirrors allocated])
    void* p = take(t, b, rounded, bytes);
    b->borrower = &requester;
    b->extra_streams.push_back(requester.stream);
    ++t.stats.num_cross_stream_reuses;
    return p;
  }

  Block* obtain(Shard& s, std::size_t rounded, bool expandable) {
    if (config.garbage_collection_threshold > 0 &&
        static_cast<double>(reserved.total() + rounded) >
            config.garbage_collection_threshold * static_cast<double>(detail::allowed_bytes(*s.pool, config)) &&
        !events->capturing(s.stream)) {  // See Note [No cache release during capture].
      release_cached(s, false);
    }
    return expandable ? grow_arena(s, rounded) : new_segment(s, rounded);
  }

  // The slow path: free every cache, retry once, then report.
  void* allocate_after_release(std::size_t bytes, Shard& s, std::size_t rounded, bool expandable) {
    // See Note [No cache release during capture].
    const bool capturing = events->capturing(s.stream);
    if (!capturing) {
      retries.fetch_add(1);
      release_all_cached();
      std::lock_guard lock(s.lock);
      Block* b = find_free(s, rounded, expandable);
      if (b) remove_free(s, b);
      else b = expandable ? grow_arena(s, rounded) : new_segment(s, rounded);
      if (b) return take(s, b, rounded, bytes);
    }
    // The report visits every shard, this one included: built with no lock held.
    ooms.fetch_add(1);
    history.trace(TraceEntry::Action::oom, nullptr, bytes, s.stream);
    OutOfMemoryInfo info = detail::gather_oom_info(device, bytes, s, capturing, all_shards());
    std::string report = detail::oom_report(info, *s.pool, config);
    oom_observers.notify(info, report);
    throw OutOfMemoryError("CachingAllocator::allocate", report, bytes);
  }

  // Marks free block `b` (not indexed) allocated for `rounded` bytes, splitting off the rest.
  void* take(Shard& s, Block* b, std::size_t rounded, std::size_t requested) {
    if (should_split(b, rounded)) {
      Block* rest = s.new_block();
      rest->ptr = b->ptr + rounded;
      rest->size = b->size - rounded;
      rest->freed_at = b->freed_at;
      rest->arena = b->arena;
      rest->prev = b;
      rest->next = b->next;
      if (b->next) b->next->prev = rest;
      b->next = rest;
      if (b->arena->last == b) b->arena->last = rest;
      b->size = rounded;
      insert_free(s, rest);
    }
    b->state = Block::State::allocated;
    b->requested = requested;
    ++s.allocations;
    s.live.insert(b->ptr, b);
    const int pi = pool_index(b->size);
    const auto size = static_cast<std::int64_t>(b->size);
    // The grant covers the allocation before it counts. See Note [Device-wide peaks].
    grants.cover(s.granted, s.stats.allocated_bytes[0].current + size);
    for (int i : {0, pi}) {
      s.stats.allocation[i].increase(1);
      s.stats.allocated_bytes[i].increase(size);
      s.stats.requested_bytes[i].increase(static_cast<std::int64_t>(requested));
      if (!s.active_mirrors_allocation) {
        s.stats.active[i].increase(1);
        s.stats.active_bytes[i].increase(size);
      }
    }
    if (b->size >= config.max_split_size) s.stats.oversize_allocations.increase(1);
    if (history.enabled()) {
      history.capture(b->frames);
      history.trace(TraceEntry::Action::alloc, b->ptr, b->size, s.stream, b->frames);
    }
    return b->ptr;
  }

  [[noreturn]] static void unknown_pointer(const char* api, const void* ptr) {
    throw InvalidArgumentError(api, concat("pointer ", ptr,
                                                   " was not returned by this allocator or was already freed"));
  }

  // false (and nothing done) when `ptr` lies in none of this allocator's arenas.
  bool deallocate_if_owned(void* ptr) {
    Arena* a = arena_table.find(ptr);
    if (!a) return false;
    deallocate_in(*a->shard, ptr);
    return true;
  }

  void deallocate_in(Shard& s, void* ptr) {
    std::lock_guard lock(s.lock);
    Block* b = s.live.erase(ptr);
    if (!b) unknown_pointer("CachingAllocator::deallocate", ptr);
    const int pi = pool_index(b->size);
    const auto size = static_cast<std::int64_t>(b->size);
    for (int i : {0, pi}) {
      s.stats.allocation[i].decrease(1);
      s.stats.allocated_bytes[i].decrease(size);
      s.stats.requested_bytes[i].decrease(static_cast<std::int64_t>(b->requested));
    }
    grants.trim(s.granted, s.stats.allocated_bytes[0].current);
    if (b->size >= config.max_split_size) s.stats.oversize_allocations.decrease(1);
    history.trace(TraceEntry::Action::free_requested, b->ptr, b->size, s.stream, b->frames);
    // A lent block's every use is on other streams than s's, which its free waits for: it is
    // then free for all. See Note [Memory across streams].
    b->freed_at = b->borrower ? 0 : s.marks.stamp();
    if (b->borrower && b->extra_streams.size() == 1) {
      b->state = Block::State::pending;
      await_borrower(s, b);
      return;
    }
    if (!b->extra_streams.empty()) {
      b->state = Block::State::pending;
      s.pending_frees.add(b, *events);
      return;
    }
    account_inactive(s, b);
    history.trace(TraceEntry::Action::free_completed, b->ptr, b->size, s.stream, b->frames);
    flush_recent(s);
    b->state = Block::State::free;
    b->frames.reset();
    s.recent = b;
  }

  template <class F>
  auto with_live_block(const void* ptr, const char* api, F&& f) const {
    Arena* a = ptr ? arena_table.find(ptr) : nullptr;
    if (!a) unknown_pointer(api, ptr);
    Shard& s = *a->shard;
    std::lock_guard lock(s.lock);
    Block* b = s.live.find(ptr);
    if (!b) unknown_pointer(api, ptr);
    return f(s, *b);
  }
};

}  // namespace

struct CachingAllocator::Impl : Engine {
  using Engine::Engine;
};

CachingAllocator::CachingAllocator(int device, std::shared_ptr<SegmentProvider> provider,
                                   std::shared_ptr<StreamEvents> events, AllocatorConfig config)
    : impl_(std::make_unique<Impl>(device, std::move(provider), std::move(events), config)) {}

CachingAllocator::~CachingAllocator() {
  std::size_t leaked = 0;
  impl_->for_each_shard([&](Shard& s) {
    std::lock_guard lock(s.lock);
    s.marks.release(*impl_->events);
    try {
      impl_->release_cached(s, true);
    } catch (const std::exception& e) {
      // Destructors never throw; at exit the runtime may already be gone.
      CUDAKIT_LOG(warning, "releasing cached memory failed: ", e.what());
    }
    leaked += s.live.size();
    for (auto& a : s.arenas) {
      if (a->expandable) {
        // Unmap what is still mapped (live blocks leak with it) and drop the reservation.
        std::size_t offset = 0;
        for (std::size_t chunk : a->chunks) {
          s.pool->provider->unmap(a->base + offset, chunk);
          offset += chunk;
        }
        s.pool->provider->release_range(a->base, a->range);
      } else {
        s.pool->provider->free_segment(a->base, a->mapped, s.stream);
      }
      for (Block* b = a->first; b;) {
        Block* next = b->next;
        delete b;
        b = next;
      }
    }
  });
  if (leaked) {
    CUDAKIT_LOG(warning, "caching allocator of device ", impl_->device, " destroyed with ", leaked,
                " live allocation(s)");
  }
}

void* CachingAllocator::allocate(std::size_t bytes, StreamKey stream, PoolId pool) {
  return impl_->allocate(bytes, stream, pool);
}
void CachingAllocator::deallocate(void* ptr) {
  if (ptr && !impl_->deallocate_if_owned(ptr)) impl_->unknown_pointer("CachingAllocator::deallocate", ptr);
}

bool CachingAllocator::deallocate_if_owned(void* ptr) { return ptr && impl_->deallocate_if_owned(ptr); }

void CachingAllocator::record_stream(void* ptr, StreamKey stream) {
  impl_->with_live_block(ptr, "CachingAllocator::record_stream", [&](Shard& s, Block& b) {
    // A lent block's own shard's stream is another user (See Note [Memory across streams]).
    if ((stream != s.stream || b.borrower) &&
        std::find(b.extra_streams.begin(), b.extra_streams.end(), stream) == b.extra_streams.end()) {
      b.extra_streams.push_back(stream);
      impl_->stop_mirroring_active(s);
    }
    return 0;
  });
}

std::size_t CachingAllocator::allocation_size(const void* ptr) const {
  return impl_->with_live_block(ptr, "CachingAllocator::allocation_size",
                                [](Shard&, Block& b) { return b.size; });
}

bool CachingAllocator::owns(const void* ptr) const noexcept { return impl_->arena_table.find(ptr) != nullptr; }

void CachingAllocator::empty_cache() { impl_->release_all_cached(); }

void CachingAllocator::process_events() {
  impl_->for_each_shard([&](Shard& s) {
    std::lock_guard lock(s.lock);
    impl_->complete_pending(s, false);
    impl_->complete_awaiting(s, true);
  });
}

PoolId CachingAllocator::new_pool_id() noexcept { return PoolId{0, g_pool_counter.fetch_add(1)}; }

void CachingAllocator::create_pool(PoolId id, std::shared_ptr<SegmentProvider> provider) {
  std::lock_guard lock(impl_->pools_mutex);
  auto& slot = impl_->pools[id];
  if (slot && !slot->released) {
    throw InvalidArgumentError("CachingAllocator::create_pool",
                               concat("pool (", id.first, ", ", id.second, ") already exists"));
  }
  slot = impl_->make_pool(id, provider ? std::move(provider) : impl_->default_provider);
}

void CachingAllocator::release_pool(PoolId id) {
  if (id.is_default()) {
    throw InvalidArgumentError("CachingAllocator::release_pool", "the default pool cannot be released");
  }
  Pool* pool = impl_->find_pool(id);
  if (!pool) {
    throw InvalidArgumentError("CachingAllocator::release_pool",
                               concat("pool (", id.first, ", ", id.second, ") does not exist"));
  }
  {
    std::lock_guard lock(pool->shards_mutex);
    for (auto& s : pool->shards) {
      std::lock_guard shard_lock(s->lock);
      impl_->release_cached(*s, true);
    }
  }
  {
    std::lock_guard lock(impl_->pools_mutex);
    pool->released = true;  // no new allocations; live blocks can still be freed
  }
  impl_->generation.fetch_add(1);
}

bool CachingAllocator::has_pool(PoolId id) const { return impl_->find_pool(id) != nullptr; }

std::size_t CachingAllocator::pool_reserved_bytes(PoolId id) const {
  std::size_t total = 0;
  impl_->for_each_shard([&](Shard& s) {
    if (s.pool->id != id) return;
    std::lock_guard lock(s.lock);
    total += static_cast<std::size_t>(s.stats.reserved_bytes[0].current);
  });
  return total;
}

std::size_t CachingAllocator::pool_allocated_bytes(PoolId id) const {
  std::size_t total = 0;
  impl_->for_each_shard([&](Shard& s) {
    if (s.pool->id != id) return;
    std::lock_guard lock(s.lock);
    total += static_cast<std::size_t>(s.stats.allocated_bytes[0].current);
  });
  return total;
}

MemoryStats CachingAllocator::stats() const {
  MemoryStats out;
  impl_->for_each_shard([&](Shard& s) {
    std::lock_guard lock(s.lock);
    impl_->flush_recent(s);  // observable state is the merged one
    const MemoryStats& in = s.stats;
    auto merge = [](StatArray& a, const StatArray& b) {
      for (int i = 0; i < 3; ++i) a[i].merge(b[i]);
    };
    merge(out.allocation, in.allocation);
    merge(out.segment, in.segment);
    // See Note [Active mirrors allocated].
    merge(out.active, s.active_mirrors_allocation ? in.allocation : in.active);
    merge(out.inactive_split, in.inactive_split);
    merge(out.allocated_bytes, in.allocated_bytes);
    merge(out.reserved_bytes, in.reserved_bytes);
    merge(out.active_bytes, s.active_mirrors_allocation ? in.allocated_bytes : in.active_bytes);
    merge(out.inactive_split_bytes, in.inactive_split_bytes);
    merge(out.requested_bytes, in.requested_bytes);
    out.oversize_allocations.merge(in.oversize_allocations);
    out.oversize_segments.merge(in.oversize_segments);
    out.num_device_alloc += in.num_device_alloc;
    out.num_device_free += in.num_device_free;
    out.num_cross_stream_reuses += in.num_cross_stream_reuses;
  });
  // See Note [Device-wide peaks] in detail/device_peaks.hpp.
  out.allocated_bytes[0].peak = impl_->grants.bound_peak(out.allocated_bytes[0].peak);
  out.reserved_bytes[0].peak = impl_->reserved.bound_peak(out.reserved_bytes[0].peak);
  out.num_alloc_retries = impl_->retries.load();
  out.num_ooms = impl_->ooms.load();
  out.num_sync_all_streams = impl_->sync_all.load();
  out.max_split_size = max_split_stat(impl_->config);
  return out;
}

namespace {
template <class F>
void for_each_stat(MemoryStats& m, F&& f) {
  for (StatArray* a : {&m.allocation, &m.segment, &m.active, &m.inactive_split, &m.allocated_bytes,
                       &m.reserved_bytes, &m.active_bytes, &m.inactive_split_bytes, &m.requested_bytes}) {
    for (Stat& s : *a) f(s);
  }
  f(m.oversize_allocations);
  f(m.oversize_segments);
}
}  // namespace

void CachingAllocator::reset_peak_stats() {
  impl_->for_each_shard([&](Shard& s) {
    std::lock_guard lock(s.lock);
    for_each_stat(s.stats, [](Stat& st) { st.peak = st.current; });
  });
  impl_->grants.reset_peak();
  impl_->reserved.reset_peak();
}

void CachingAllocator::reset_accumulated_stats() {
  impl_->for_each_shard([&](Shard& s) {
    std::lock_guard lock(s.lock);
    for_each_stat(s.stats, [](Stat& st) { st.allocated = st.freed = 0; });
    s.stats.num_device_alloc = s.stats.num_device_free = s.stats.num_cross_stream_reuses = 0;
  });
  impl_->retries = 0;
  impl_->ooms = 0;
  impl_->sync_all = 0;
}

std::uint64_t CachingAllocator::attach_oom_observer(OutOfMemoryObserver observer) {
  return impl_->oom_observers.attach(std::move(observer));
}

void CachingAllocator::detach_oom_observer(std::uint64_t id) { impl_->oom_observers.detach(id); }

void CachingAllocator::set_memory_fraction(double fraction) {
  if (!(fraction > 0.0 && fraction <= 1.0)) {
    throw InvalidArgumentError("set_per_process_memory_fraction",
                               concat("fraction ", fraction, " must lie in (0, 1]"));
  }
  impl_->config.per_process_memory_fraction = fraction;
}

const AllocatorConfig& CachingAllocator::config() const noexcept { return impl_->config; }
int CachingAllocator::device() const noexcept { return impl_->device; }
SegmentProvider& CachingAllocator::provider() const noexcept { return *impl_->default_provider; }

void CachingAllocator::record_history(bool enabled, std::size_t max_entries, CaptureFrames capture) {
  impl_->history.configure(enabled, max_entries, std::move(capture));
}

MemorySnapshot CachingAllocator::snapshot() const {
  MemorySnapshot snap;
  snap.device = impl_->device;
  snap.config = impl_->config;
  impl_->for_each_shard([&](Shard& s) {
    std::lock_guard lock(s.lock);
    impl_->flush_recent(s);
    for (auto& a : s.arenas) {
      if (a->mapped == 0) continue;
      SegmentSnapshot seg;
      seg.device = impl_->device;
      seg.address = reinterpret_cast<std::uintptr_t>(a->base);
      seg.total_size = a->mapped;
      seg.stream = s.stream;
      seg.is_small = a->small;
      seg.is_expandable = a->expandable;
      seg.pool = s.pool->id;
      for (Block* b = a->first; b; b = b->next) {
        BlockSnapshot bs;
        bs.address = reinterpret_cast<std::uintptr_t>(b->ptr);
        bs.size = b->size;
        bs.requested_size = b->state == Block::State::allocated ? b->requested : 0;
        bs.state = b->state == Block::State::allocated ? BlockSnapshot::State::active_allocated
                   : b->state == Block::State::pending ? BlockSnapshot::State::active_pending_free
                                                       : BlockSnapshot::State::inactive;
        bs.frames = b->frames;
        if (b->state == Block::State::allocated) {
          seg.allocated_size += b->size;
          seg.requested_size += b->requested;
        }
        if (b->state != Block::State::free) seg.active_size += b->size;
        seg.blocks.push_back(std::move(bs));
      }
      snap.segments.push_back(std::move(seg));
    }
  });
  std::sort(snap.segments.begin(), snap.segments.end(),
            [](const SegmentSnapshot& a, const SegmentSnapshot& b) { return a.address < b.address; });
  snap.trace = impl_->history.entries();
  snap.stats = stats();
  return snap;
}

}  // namespace cudakit::memory
