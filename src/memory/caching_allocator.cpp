#include "cudakit/memory/caching_allocator.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cstdio>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <thread>
#include <vector>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/core/sync_debug_mode.hpp"
#include "cudakit/core/log.hpp"
#include "memory/detail/arena_table.hpp"
#include "memory/detail/cross_stream_lending.hpp"
#include "memory/detail/external_holds.hpp"
#include "memory/detail/memory_supply.hpp"
#include "memory/detail/out_of_memory_path.hpp"
#include "memory/detail/request_sizes.hpp"
#include "memory/detail/device_ledger.hpp"
#include "memory/detail/reserved_bytes.hpp"
#include "memory/detail/history.hpp"
#include "memory/detail/oom_observers.hpp"
#include "memory/detail/segment_observers.hpp"
#include "memory/detail/oom_report.hpp"
#include "memory/detail/pool.hpp"
#include "memory/detail/segment_snapshots.hpp"
#include "memory/detail/shard.hpp"
#include "memory/detail/thread_shards.hpp"

namespace cudakit::memory {
using cudakit::detail::concat;
using detail::Arena;
using detail::Block;
using detail::kRound;
using detail::Pool;
using detail::Shard;
using detail::kSmallRequest;
using detail::pool_index;
using detail::round_up;

namespace {

// MemoryStats::max_split_size: -1 for no limit.
std::int64_t max_split_stat(const AllocatorConfig& config) {
  return config.max_split_size == std::numeric_limits<std::size_t>::max()
             ? -1
             : static_cast<std::int64_t>(config.max_split_size);
}

// Note [Recently freed blocks]
// The commonest pattern is an allocation freed and the same size asked for again soon
// (temporaries in a loop, a few sizes in turn; threads sharing a stream each with their own).
// Splitting it off a free block and merging it back each time costs more than the rest of the
// fast path, so a freed block first waits, unmerged but counted as free, among its shard's last
// few frees (`recent`, RecentBlocks::kSlots of them, the oldest returned to the free index when a
// newer one needs its place): an allocation of exactly its size takes it back directly; anything
// else that needs the free index first returns them all there (merging as usual), so the slots
// never hold memory that a search could have used. A waiting block is not indexed, so merges skip
// it; a block returned next to one takes that one out of the slots and returns it first, so that
// free blocks are never left side by side.

// Note [Active mirrors allocated]
// A block stays active after its free only while events recorded on the other streams that
// record_stream() named are pending; until a shard's first such record_stream(), its active and
// active_bytes statistics equal allocation and allocated_bytes in every field. So the fast path
// does not maintain them (four of the twenty counter updates of an alloc+free pair): stats()
// reads allocation in their place, and that first record_stream() copies allocation into active
// once, after which both are kept separately.

// Note [Changing settings]
// set_allocator_settings writes the config while allocations run. Everything that reads it does
// so under a shard lock, except round_request (before the lock: it reads `divisions`, atomics
// of their own) and readers that copy it under settings_mutex (stats(), snapshot(), config(),
// the out-of-memory report). So a change takes settings_mutex, the shard-creation mutex (no
// shard appears meanwhile, and shards are created with the config's max_split_size), gathers the
// shards, then takes pools_mutex (pools created meanwhile read the config there) and every
// shard's lock, in that order. No path holds a shard lock while it waits for pools_mutex, and
// release_pool, which holds a pool's shards_mutex while it locks that pool's shards, holds one
// shard lock at a time, so the order cannot deadlock with them. Statistics that count blocks by a setting
// (oversize allocations and segments) remember, per block and segment, whether they were
// counted, so a changed max_split_size cannot unbalance them.

std::atomic<std::uint64_t> g_instance_counter{1};
std::atomic<std::uint64_t> g_pool_counter{1};

struct ShardCache {
  std::uint64_t instance = 0;
  std::uint64_t generation = 0;
  PoolId pool;
  StreamKey stream = 0;
  Shard* shard = nullptr;
};
// A thread's last shards, one slot per stream hash: a thread that allocates on several streams in
// turn (a replay of a multi-stream trace, a worker feeding two streams) finds each shard again
// without the pool's locks. initial-exec: reached at a fixed offset from the thread pointer. The
// default model for a shared library calls __tls_get_addr on every allocation (a few percent of
// an operation's instructions replaying serve_kv: notes/figures.md). It takes 192 bytes of the
// static TLS that glibc keeps spare for libraries loaded with dlopen (512 by default), as
// allocators such as jemalloc do.
constexpr std::size_t kShardCacheSlots = 4;
[[gnu::tls_model("initial-exec")]] thread_local std::array<ShardCache, kShardCacheSlots> t_shard_cache;

std::size_t shard_cache_slot(StreamKey stream) {
  return static_cast<std::size_t>((static_cast<std::uint64_t>(stream) * 0x9E3779B97F4A7C15ull) >> 62);
}

// The allocator's state and its policy. In this file's anonymous namespace, so that its
// functions are local: GCC sees every call of them and inlines the fast path as it needs (See
// Note [Allocator internals are hidden] in detail/block.hpp). Its parts along their seams are
// class templates of their own in detail/ (lending across streams, external holds, memory from
// the providers, the out-of-memory path), which Engine derives from, each reaching the rest
// through e(); instantiated with this file's Engine, they are as local as it is. The device's
// ledger of statistics is an object of its own (detail/device_ledger.hpp).
struct Engine : detail::CrossStreamLending<Engine>, detail::ExternalHolds<Engine>, detail::MemorySupply<Engine>,
                detail::OutOfMemoryPath<Engine>, detail::StreamThreadShards<Engine> {
  int device;
  std::shared_ptr<SegmentProvider> default_provider;
  std::shared_ptr<StreamEvents> events;
  AllocatorConfig config;  // See Note [Changing settings].
  ThreadShards thread_shards_mode = ThreadShards::off;  // config's, fixed at creation
  mutable std::mutex settings_mutex;
  // roundup_power2_divisions as round_request reads it, with no lock held; rounds_to_divisions:
  // any entry above 1, checked first so that the default costs one branch per allocation.
  std::array<std::atomic<unsigned>, AllocatorConfig::kRoundupIntervals> divisions{};
  std::atomic<bool> rounds_to_divisions{false};
  const std::uint64_t instance = g_instance_counter.fetch_add(1);
  std::atomic<std::uint64_t> generation{1};

  mutable std::mutex pools_mutex;
  std::map<PoolId, std::unique_ptr<Pool>> pools;

  // See Note [Shards and statistics] in detail/shard.hpp.
  detail::ArenaTable arena_table;

  // See Note [Device-wide peaks] in detail/device_ledger.hpp.
  detail::ReservedBytes reserved;
  detail::DeviceLedger device_stats;
  alignas(128) std::atomic<std::int64_t> ooms{0};
  std::atomic<std::int64_t> retries{0};
  std::atomic<std::int64_t> sync_all{0};

  detail::OomObservers oom_observers;
  detail::SegmentObservers segment_observers;
  detail::History history;

  Engine(int dev, std::shared_ptr<SegmentProvider> provider, std::shared_ptr<StreamEvents> ev,
         AllocatorConfig cfg)
      : device(dev), default_provider(std::move(provider)), events(std::move(ev)) {
    if (!default_provider || !events) {
      throw InvalidArgumentError("CachingAllocator", "a segment provider and an event source are required");
    }
    set_config(cfg);
    thread_shards_mode = cfg.thread_shards;
    pools.emplace(PoolId{}, make_pool(PoolId{}, default_provider, {}));
  }

  // Takes `next` as the config (the locks of Note [Changing settings] held, or no other thread).
  void set_config(const AllocatorConfig& next) {
    config = next;
    if (config.expandable_segments && default_provider->page_size() == 0) {
      // The provider cannot map on demand (e.g. user allocation functions): fixed segments.
      config.expandable_segments = false;
    }
    bool any = false;
    for (std::size_t i = 0; i < divisions.size(); ++i) {
      divisions[i].store(config.roundup_power2_divisions[i], std::memory_order_relaxed);
      any |= config.roundup_power2_divisions[i] > 1;
    }
    rounds_to_divisions.store(any, std::memory_order_relaxed);
  }

  AllocatorConfig current_config() const {
    std::lock_guard lock(settings_mutex);
    return config;
  }

  // Applies change(config) to a copy of the config, then takes the copy (See Note [Changing
  // settings]). What `change` throws leaves everything as it was.
  template <class Change>
  void reconfigure(Change&& change) {
    std::lock_guard serial(settings_mutex);
    AllocatorConfig next = config;  // written only under settings_mutex
    change(next);
    std::lock_guard creating(device_stats.creation_mutex());
    const std::vector<Shard*> shards = all_shards();
    std::lock_guard lock(pools_mutex);
    lock_all(shards);
    set_config(next);
    for (auto& [id, pool] : pools) pool->expandable = expandable_for(*pool->provider, pool->options);
    for (Shard* s : shards) {
      s->stats.max_split_size = max_split_stat(config);
      s->lock.unlock();
    }
  }

  // Locks every shard of `shards`, in their order, giving back the headroom of those it holds
  // while it waits for the next (See Note [Device-wide peaks]).
  void lock_all(const std::vector<Shard*>& shards) {
    for (std::size_t i = 0; i < shards.size(); ++i) {
      while (!shards[i]->lock.try_lock()) {
        if (device_stats.collapse_wanted()) {
          for (std::size_t j = 0; j < i; ++j) device_stats.give_back_held(*shards[j]);
        }
        std::this_thread::yield();
      }
    }
  }

  // ---- pools and shards ----
  Pool* find_pool(PoolId id) const {
    std::lock_guard lock(pools_mutex);
    auto it = pools.find(id);
    return it == pools.end() || it->second->released ? nullptr : it->second.get();
  }
  Pool& existing_pool(PoolId id, const char* api) const {
    if (Pool* pool = find_pool(id)) return *pool;
    throw InvalidArgumentError(api,
                               concat("memory pool (", id.first, ", ", id.second, ") does not exist or was released"));
  }

  Shard* shard_for(PoolId pool_id, StreamKey stream) {
    ShardCache& c = t_shard_cache[shard_cache_slot(stream)];
    const std::uint64_t gen = generation.load(std::memory_order_acquire);
    if (c.instance == instance && c.generation == gen && c.stream == stream && c.pool == pool_id) {
      return c.shard;
    }
    return look_up_shard(c, gen, pool_id, stream);
  }

  // shard_for() past the thread's cache, out of line so that a hit costs no register saves.
  [[gnu::noinline]] Shard* look_up_shard(ShardCache& c, std::uint64_t gen, PoolId pool_id, StreamKey stream) {
    Pool* pool = &existing_pool(pool_id, "CachingAllocator::allocate");
    auto find = [&]() -> Shard* {
      std::lock_guard lock(pool->shards_mutex);
      auto it = pool->shard_of_stream.find(stream);
      return it == pool->shard_of_stream.end() ? nullptr : it->second;
    };
    Shard* shard = find();
    if (!shard) {
      std::lock_guard creating(device_stats.creation_mutex());
      shard = find();
      if (!shard) shard = &make_shard(*pool, stream);
    }
    // See Note [Threads sharing a stream] in detail/thread_shards.hpp.
    if (uses_slot_shard(*shard)) {
      if (Shard* mine = slot_shard(*shard)) shard = mine;
    }
    c = ShardCache{instance, gen, pool_id, stream, shard};
    return shard;
  }
  void forget_cached_shard(StreamKey stream) { t_shard_cache[shard_cache_slot(stream)] = ShardCache{}; }
  std::int64_t max_split_stat_now() const { return max_split_stat(config); }

  // A request from inside the provider of the pool it names (See Note [A pool's allocator calling
  // back] in detail/memory_supply.hpp): served by the default pool on the same stream.
  Shard* shard_for_reentrant_request(const Shard& s) {
    if (s.pool->id.is_default()) {
      throw InvalidArgumentError("CachingAllocator::allocate",
                                 "the default pool's allocation function asked the default pool for memory: "
                                 "it must obtain memory elsewhere (cudaMalloc, another pool)");
    }
    return shard_for(PoolId{}, s.stream);
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

  // Whether a pool's new memory comes as expandable arenas (See Note [Pool options]).
  bool expandable_for(const SegmentProvider& provider, const PoolOptions& options) const {
    return config.expandable_segments && provider.page_size() != 0 && !options.no_split;
  }

  std::unique_ptr<Pool> make_pool(PoolId id, std::shared_ptr<SegmentProvider> provider, PoolOptions options) const {
    auto pool = std::make_unique<Pool>();
    pool->id = id;
    pool->options = options;
    pool->expandable = expandable_for(*provider, options);
    pool->provider = std::move(provider);
    return pool;
  }

  // Starts the device's ledger as the second shard is created (the creation mutex held, so the
  // one existing shard is all there is). See Note [Device-wide peaks].
  // A second shard asked for from inside the one shard's own provider (See Note [A pool's
  // allocator calling back] in detail/memory_supply.hpp) finds that shard locked by this very
  // thread, between two changes: its statistics are read as they are.
  void start_device_stats() {
    for_each_shard([&](Shard& s) {
      if (s.pool == detail::t_pool_being_supplied) return device_stats.start(s.observed_stats());
      std::lock_guard lock(s.lock);
      device_stats.start(s.observed_stats());
    });
  }

  // Applies change(stats, false) to s's statistics and, while the device's ledger is kept,
  // change(counters, true) to s's headroom or, without headroom, to the ledger's sums, in the
  // same critical section (s locked). See Note [Device-wide peaks].
  template <class Change>
  [[gnu::always_inline]] void count(Shard& s, Change&& change) {
    change(s.stats, false);
    if (!device_stats.active()) return;
    if (s.local) {
      detail::t_headroom_overdrawn = false;  // See Note [Reading counters just written].
      change(s.headroom, true);
      if (!detail::t_headroom_overdrawn && !device_stats.collapse_wanted()) [[likely]] return;
      device_stats.settle(s);
      return;
    }
    device_stats.apply(s, [&](auto& sums) { change(sums, true); });
  }

  // ---- sizes ----
  std::size_t round_request(std::size_t bytes) const {
    std::size_t r = round_up(bytes, kRound);
    if (rounds_to_divisions.load(std::memory_order_relaxed)) [[unlikely]] {
      // torch's rule: d equal steps between the powers of two around r, once r exceeds 512 * d.
      const std::size_t d = divisions[AllocatorConfig::roundup_interval(r)].load(std::memory_order_relaxed);
      if (d > 1 && r > kRound * d) {
        const std::size_t p = std::size_t{1} << (std::bit_width(r) - 1);
        r = round_up(r, std::max(kRound, p / d));
      }
    }
    return r;
  }

  // ---- free blocks (shard locked) ----
  detail::FreeIndex& index_for(Shard& s, const Arena& a) {
    return !a.expandable && a.small ? s.small_index : s.large_index;
  }
  static bool is_split(const Block* b) { return b->prev || b->next; }

  void insert_free(Shard& s, Block* b) {
    index_for(s, *b->arena).insert(b);
    count_inactive_split(s, b, true);
    if (!s.listed.load(std::memory_order_relaxed)) [[unlikely]] list_lender(s);
  }
  void remove_free(Shard& s, Block* b) {
    index_for(s, *b->arena).remove(b);
    count_inactive_split(s, b, false);
  }
  // inactive_split counts the free blocks of split segments as the program sees them: those in
  // the free index and lent blocks returning to it (See Note [Lent blocks in the statistics]).
  void count_inactive_split(Shard& s, const Block* b, bool added) {
    if (!is_split(b)) return;
    const int pi = pool_index(b->size);
    const auto bytes = static_cast<std::int64_t>(b->size);
    count(s, [&](auto& m, bool) {
      for (int i : {0, pi}) {
        if (added) {
          m.inactive_split[i].increase(1);
          m.inactive_split_bytes[i].increase(bytes);
        } else {
          m.inactive_split[i].decrease(1);
          m.inactive_split_bytes[i].decrease(bytes);
        }
      }
    });
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
    if (b->arena->shard->pool->options.no_split) return false;  // See Note [Pool options].
    const std::size_t remaining = b->size - rounded;
    if (b->arena->expandable || b->arena->small) return remaining >= kRound;
    return rounded < config.max_split_size && remaining > kSmallRequest;
  }

  // Returns a block to the free index, merging it with free neighbours.
  void free_block(Shard& s, Block* b) {
    // A neighbour waiting unmerged among the recent frees is merged first, so that free blocks
    // are never left side by side (See Note [Recently freed blocks]).
    while (Block* n = s.recent.take_neighbour_of(b)) free_block(s, n);
    b->state = Block::State::free;
    b->borrower = nullptr;
    b->extra_streams.clear();
    b->frames.reset();
    for (Block* n : {b->prev, b->next}) {
      if (!n || n->state != Block::State::free || !n->indexed) continue;
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
    count(s, [&](auto& m, bool device) { count_inactive(s, b, m, device); });
  }
  // The ledger counts active blocks itself; a shard, only once no longer mirroring (See Note
  // [Active mirrors allocated]).
  template <class Stats>  // MemoryStats, or the device's StatCounters
  static void count_inactive(const Shard& s, const Block* b, Stats& m, bool device) {
    if (!device && s.active_mirrors_allocation) return;
    const int pi = pool_index(b->size);
    for (int i : {0, pi}) {
      m.active[i].decrease(1);
      m.active_bytes[i].decrease(static_cast<std::int64_t>(b->size));
    }
  }

  // Returns the recently freed blocks to the free index (shard locked).
  void flush_recent(Shard& s) {
    while (Block* b = s.recent.take_oldest()) free_block(s, b);
  }

  // ---- serving requests ----
  void* allocate(std::size_t bytes, StreamKey stream, PoolId pool_id) {
    if (bytes == 0) return nullptr;
    Shard* shard = shard_for(pool_id, stream);
    if (shard->pool == detail::t_pool_being_supplied) [[unlikely]] shard = shard_for_reentrant_request(*shard);
    Shard& s = *shard;
    if (bytes > detail::kLargestRequest) [[unlikely]] report_oom(bytes, s, events->capturing(s.stream));
    const std::size_t rounded = round_request(bytes);
    // The same instructions as lock(), its waiting replaced (See Note [Threads sharing a stream]).
    if (!s.lock.try_lock()) [[unlikely]] return allocate_contended(s, bytes, rounded);
    return serve(s, bytes, rounded);
  }

  // allocate() from s, locked. The fast path: nothing to complete, no history to record (which
  // may throw), a recent free of the size. Nothing on it throws, so it needs no guard for the lock.
  [[gnu::always_inline]] void* serve(Shard& s, std::size_t bytes, std::size_t rounded) {
    const bool quiet = !has_work_to_complete(s) && !history.enabled();
    if (quiet) [[likely]] {
      if (Block* b = s.recent.take(rounded)) {
        void* p = take(s, b, rounded, bytes);
        s.lock.unlock();
        return p;
      }
    }
    return allocate_locked(s, bytes, rounded, /*recent_missed=*/quiet);
  }

  // Whether s has frees or lends to complete, or marks to advance, before it serves a request
  // (s locked).
  static bool has_work_to_complete(const Shard& s) {
    return s.pending_frees.any_deferred() || s.pending_frees.any_pending() || s.awaiting_count ||
           s.marks_interest.load(std::memory_order_relaxed);
  }

  // allocate() past its fast path, s's lock held on entry: released by hand before the paths
  // that take other locks, and on unwinding (a provider or an event query that throws) by the
  // guard. `recent_missed`: the fast path looked among the recent frees, and nothing was
  // completed since, so they need no second look.
  [[gnu::noinline]] void* allocate_locked(Shard& s, std::size_t bytes, std::size_t rounded, bool recent_missed) {
    std::unique_lock lock(s.lock, std::adopt_lock);
    if (s.pending_frees.any_deferred()) [[unlikely]] s.pending_frees.record_deferred(*events);
    if (s.pending_frees.any_pending()) complete_pending(s, false);
    if (s.awaiting_count) [[unlikely]] complete_awaiting(s, true);
    // Another stream waits for this one's frees: marks, the stream being alive as it allocates.
    if (s.marks_interest.load(std::memory_order_relaxed)) [[unlikely]] advance_own_marks(s, false);
    if (!recent_missed) {
      if (Block* b = s.recent.take(rounded)) {
        void* p = take(s, b, rounded, bytes);
        lock.unlock();
        return p;
      }
    }
    const bool expandable = s.pool->expandable;
    flush_recent(s);
    Block* b = find_free(s, rounded, expandable);
    if (b) {
      remove_free(s, b);
      if (s.borrows_in_a_row.load(std::memory_order_relaxed)) s.borrows_in_a_row.store(0, std::memory_order_relaxed);
    } else {
      if (s.awaiting_count) {
        complete_awaiting(s, true);  // what this shard lent may be back
        flush_recent(s);
        b = find_free(s, rounded, expandable);
      }
      // Elsewhere, with s unlocked: the stream's other shards (See Note [Threads sharing a
      // stream]), then other streams'; s's own index again after each (freed here meanwhile).
      auto look_again = [&] {
        lock.lock();
        flush_recent(s);
        b = find_free(s, rounded, expandable);
        if (b) remove_free(s, b);
      };
      if (b) {
        remove_free(s, b);
      } else if (may_take_from_siblings(s)) {
        lock.unlock();
        if (void* p = allocate_from_siblings(bytes, s, rounded, expandable)) return p;
        look_again();
      }
      if (!b && may_borrow(s)) {
        lock.unlock();
        if (void* p = allocate_elsewhere(bytes, s, rounded, expandable)) return p;
        look_again();
      }
      if (!b) {
        b = obtain(s, rounded, expandable);
        if (b) s.borrows_in_a_row.store(0, std::memory_order_relaxed);
      }
      if (!b) {
        lock.unlock();
        return allocate_after_release(bytes, s, rounded, expandable);
      }
    }
    void* p = take(s, b, rounded, bytes);
    lock.unlock();
    return p;
  }

  Block* obtain(Shard& s, std::size_t rounded, bool expandable) {
    if (config.garbage_collection_threshold > 0 &&
        static_cast<double>(reserved.total() + rounded) >
            config.garbage_collection_threshold * static_cast<double>(detail::allowed_bytes(*s.pool, config)) &&
        !s.pool->held() &&  // See Note [A graph's pool keeps its free memory].
        !events->capturing(s.stream)) {  // See Note [No cache release during capture].
      release_cached(s, false);
    }
    return expandable ? grow_arena(s, rounded) : new_segment(s, rounded);
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
    b->oversize = b->size >= config.max_split_size;  // See Note [Changing settings].
    count(s, [&](auto& m, bool device) {
      for (int i : {0, pi}) {
        m.allocation[i].increase(1);
        m.allocated_bytes[i].increase(size);
        m.requested_bytes[i].increase(static_cast<std::int64_t>(requested));
        if (device || !s.active_mirrors_allocation) {  // See Note [Active mirrors allocated].
          m.active[i].increase(1);
          m.active_bytes[i].increase(size);
        }
      }
      if (b->oversize) m.oversize_allocations.increase(1);
    });
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

  // The program's free of `b` in the statistics and the history, and its stamp (shard locked);
  // with `inactive_now` (no stream's work to wait for), its end of activity as well, in the same
  // change (See Note [Device-wide peaks]).
  void count_free(Shard& s, Block* b, bool inactive_now) {
    const int pi = pool_index(b->size);
    const auto size = static_cast<std::int64_t>(b->size);
    count(s, [&](auto& m, bool device) {
      for (int i : {0, pi}) {
        m.allocation[i].decrease(1);
        m.allocated_bytes[i].decrease(size);
        m.requested_bytes[i].decrease(static_cast<std::int64_t>(b->requested));
      }
      if (b->oversize) m.oversize_allocations.decrease(1);
      if (inactive_now) count_inactive(s, b, m, device);
    });
    history.trace(TraceEntry::Action::free_requested, b->ptr, b->size, s.stream, b->frames);
    // A lent block's every use is on other streams than s's, which its free waits for: it is
    // then free for all. See Note [Memory across streams].
    b->freed_at = b->borrower ? 0 : s.marks.stamp_use();
  }

  void deallocate_in(Shard& s, void* ptr) {
    std::lock_guard lock(s.lock);
    Block* b = s.live.erase(ptr);
    // A held block is not in `live`: looked for only here. See Note [External holds].
    if (!b) [[unlikely]] return deallocate_held(s, ptr);
    // A lent block's borrower's stream is among its extra streams; with no other, its free ends
    // its activity (See Note [Lent blocks in the statistics]).
    const bool returning = b->borrower && b->extra_streams.size() == 1;
    count_free(s, b, b->extra_streams.empty() || returning);
    if (s.marks_interest.load(std::memory_order_relaxed)) [[unlikely]] advance_own_marks(s, true);
    if (returning) {
      b->state = Block::State::returning;
      count_inactive_split(s, b, true);
      await_borrower(s, b);
      return;
    }
    if (!b->extra_streams.empty()) {
      b->state = Block::State::pending;
      s.pending_frees.add(b, *events);
      return;
    }
    history.trace(TraceEntry::Action::free_completed, b->ptr, b->size, s.stream, b->frames);
    // The oldest waiting block makes room before b counts as free, so that its merge does not
    // see b (See Note [Recently freed blocks]).
    if (Block* oldest = s.recent.make_room()) free_block(s, oldest);
    b->state = Block::State::free;
    b->frames.reset();
    s.recent.push(b);
  }

  template <class F>
  auto with_live_block(const void* ptr, const char* api, F&& f) const {
    Arena* a = ptr ? arena_table.find(ptr) : nullptr;
    if (!a) unknown_pointer(api, ptr);
    Shard& s = *a->shard;
    std::lock_guard lock(s.lock);
    Block* b = s.live.find(ptr);
    if (!b) b = s.held.find_allocated(ptr);
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
    leaked += s.live.size() + s.held.size();
    impl_->report_all_segments(SegmentEvent::Kind::unmapping, s);
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

void CachingAllocator::add_external_hold(void* ptr) { impl_->add_external_hold(ptr); }
void CachingAllocator::release_external_hold(void* ptr) { impl_->release_external_hold(ptr); }
std::size_t CachingAllocator::external_holds(const void* ptr) const { return impl_->external_holds(ptr); }

CachingAllocator::Backing CachingAllocator::backing(const void* ptr) const {
  return impl_->with_live_block(ptr, "CachingAllocator::backing", [](Shard&, Block& b) {
    const Arena& a = *b.arena;
    Backing out;
    out.block = b.ptr;
    out.block_size = b.size;
    out.expandable = a.expandable;
    if (!a.expandable) {
      out.ranges.push_back({a.base, a.mapped});
      return out;
    }
    char* chunk = a.base;
    for (std::size_t size : a.chunks) {
      if (chunk < b.ptr + b.size && b.ptr < chunk + size) out.ranges.push_back({chunk, size});
      chunk += size;
    }
    return out;
  });
}

void CachingAllocator::empty_cache() {
  // Returning memory synchronizes the device (before unmapping or freeing it).
  cudakit::detail::check_synchronization("CachingAllocator::empty_cache");
  impl_->release_all_cached();
}

void CachingAllocator::process_events() {
  impl_->for_each_shard([&](Shard& s) {
    std::lock_guard lock(s.lock);
    impl_->complete_pending(s, false);
    impl_->complete_awaiting(s, true);
  });
}

PoolId CachingAllocator::new_pool_id() noexcept { return PoolId{0, g_pool_counter.fetch_add(1)}; }

void CachingAllocator::create_pool(PoolId id, std::shared_ptr<SegmentProvider> provider, PoolOptions options) {
  std::lock_guard lock(impl_->pools_mutex);
  auto& slot = impl_->pools[id];
  if (slot && !slot->released) {
    throw InvalidArgumentError("CachingAllocator::create_pool",
                               concat("pool (", id.first, ", ", id.second, ") already exists"));
  }
  slot = impl_->make_pool(id, provider ? std::move(provider) : impl_->default_provider, options);
}

void CachingAllocator::release_pool(PoolId id) {
  if (id.is_default()) {
    throw InvalidArgumentError("CachingAllocator::release_pool", "the default pool cannot be released");
  }
  Pool* pool = &impl_->existing_pool(id, "CachingAllocator::release_pool");
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
    pool->holds.store(0, std::memory_order_release);  // its memory goes back, held or not
  }
  impl_->generation.fetch_add(1);
}

void CachingAllocator::hold_pool(PoolId id) {
  impl_->existing_pool(id, "CachingAllocator::hold_pool").holds++;
}

void CachingAllocator::release_pool_hold(PoolId id) noexcept {
  if (Pool* pool = impl_->find_pool(id)) pool->release_hold();
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
    out.merge(s.observed_stats());
  });
  // See Note [Device-wide peaks] in detail/device_ledger.hpp.
  if (impl_->device_stats.active()) {
    impl_->device_stats.read(out);
  } else {
    out.reserved_bytes[0].peak = impl_->reserved.bound_peak(out.reserved_bytes[0].peak);
  }
  out.num_alloc_retries = impl_->retries.load();
  out.num_ooms = impl_->ooms.load();
  out.num_sync_all_streams = impl_->sync_all.load();
  out.max_split_size = max_split_stat(impl_->current_config());
  return out;
}

namespace {
// f(stat) for every Stat of m.
template <class F>
void for_each_stat(MemoryStats& m, F&& f) {
  MemoryStats::for_each_stat(m, m, [&](Stat& st, Stat&) { f(st); });
}
}  // namespace

void CachingAllocator::reset_peak_stats() {
  impl_->for_each_shard([&](Shard& s) {
    std::lock_guard lock(s.lock);
    for_each_stat(s.stats, [](Stat& st) { st.peak = st.current; });
  });
  impl_->device_stats.reset_peaks();
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

std::uint64_t CachingAllocator::attach_segment_observer(SegmentObserver observer) {
  const std::uint64_t id = impl_->segment_observers.attach(std::move(observer));
  // The ranges that exist now, shard by shard under each shard's lock: a range mapped meanwhile
  // may be reported twice (once as it maps, once here), one unmapped meanwhile is reported
  // unmapping only if it was reported mapped. See Note [Segment observers' locks].
  impl_->for_each_shard([&](Shard& s) {
    std::lock_guard lock(s.lock);
    impl_->report_all_segments(SegmentEvent::Kind::mapped, s, id);
  });
  return id;
}

void CachingAllocator::detach_segment_observer(std::uint64_t id) { impl_->segment_observers.detach(id); }

void CachingAllocator::set_memory_fraction(double fraction) {
  if (!(fraction > 0.0 && fraction <= 1.0)) {
    throw InvalidArgumentError("set_per_process_memory_fraction",
                               concat("fraction ", fraction, " must lie in (0, 1]"));
  }
  impl_->reconfigure([&](AllocatorConfig& next) { next.per_process_memory_fraction = fraction; });
}

void CachingAllocator::set_allocator_settings(std::string_view settings) {
  impl_->reconfigure([&](AllocatorConfig& next) {
    next = AllocatorConfig::parse_runtime(settings, next, "CachingAllocator::set_allocator_settings");
  });
}

AllocatorConfig CachingAllocator::config() const { return impl_->current_config(); }
int CachingAllocator::device() const noexcept { return impl_->device; }
SegmentProvider& CachingAllocator::provider() const noexcept { return *impl_->default_provider; }

void CachingAllocator::record_history(const MemoryHistoryOptions& options, CaptureFrames capture) {
  impl_->history.configure(options, std::move(capture));
}

void CachingAllocator::record_history(bool enabled, std::size_t max_entries, CaptureFrames capture) {
  MemoryHistoryOptions options;
  options.enabled = enabled ? MemoryHistoryOptions::Enabled::all : MemoryHistoryOptions::Enabled::none;
  options.max_entries = max_entries;
  record_history(options, std::move(capture));
}

MemorySnapshot CachingAllocator::snapshot(bool include_traces) const {
  MemorySnapshot snap;
  snap.device = impl_->device;
  snap.config = config();
  impl_->for_each_shard([&](Shard& s) {
    std::lock_guard lock(s.lock);
    impl_->flush_recent(s);
    detail::append_segment_snapshots(s, impl_->device, snap.segments);
  });
  std::sort(snap.segments.begin(), snap.segments.end(),
            [](const SegmentSnapshot& a, const SegmentSnapshot& b) { return a.address < b.address; });
  if (include_traces) snap.trace = impl_->history.entries();
  snap.stats = stats();
  return snap;
}

}  // namespace cudakit::memory
