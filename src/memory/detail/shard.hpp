#pragma once
// Shard: the allocator's state for one (pool, stream), under its own lock (See Note [Shards and
// statistics]).

#include <cstddef>
#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "cudakit/memory/memory_stats.hpp"
#include "cudakit/memory/segment_provider.hpp"
#include "memory/detail/arena.hpp"
#include "memory/detail/block.hpp"
#include "memory/detail/free_index.hpp"
#include "memory/detail/held_blocks.hpp"
#include "memory/detail/pending_frees.hpp"
#include "memory/detail/pointer_map.hpp"
#include "memory/detail/recent_blocks.hpp"
#include "memory/detail/spin_lock.hpp"
#include "memory/detail/stat_counters.hpp"
#include "memory/detail/stream_marks.hpp"
#include "memory/detail/thread_slots.hpp"

namespace cudakit::memory::detail {

// Note [Shards and statistics]
// State lives in shards, one per (pool, stream) (and, for threads sharing a stream, per thread
// slot: See Note [Threads sharing a stream] in thread_shards.hpp); a shard has its own lock, its own free-block
// index, its own live-pointer map and its own statistics, so threads that allocate on their own
// streams never touch the same cache lines (the 16-thread benchmark scales because of this).
// deallocate() finds the shard through an immutable, sorted table of arenas that is replaced
// (copy-on-write) only when an arena or segment is created or returned, so the lookup takes no
// lock. Statistics are summed over shards on read: current values, totals and counts are exact;
// peaks are discussed in Note [Device-wide peaks] in device_ledger.hpp.

struct Pool;

// Aligned so that two shards (two threads' hot locks and counters) never share a cache line.
struct alignas(128) [[gnu::visibility("hidden")]] Shard {
  SpinLock lock;
  Pool* pool = nullptr;
  StreamKey stream = 0;
  FreeIndex small_index;  // classic small pool
  FreeIndex large_index;  // classic large pool; expandable: every block
  Arena* arena = nullptr; // expandable range, created on first use
  std::vector<std::unique_ptr<Arena>> arenas;
  PointerMap<Block> live;
  std::vector<Block*> spare_blocks;
  PendingFrees pending_frees;
  // See Note [Memory across streams] in caching_allocator.cpp: this stream's marks, and the
  // frees of blocks lent to other streams, waiting for those streams' marks (per stream, in
  // stamp order).
  StreamMarks marks;
  struct AwaitingFree {
    Block* block;
    std::uint64_t stamp;
  };
  struct AwaitingFrees {
    Shard* user;
    std::deque<AwaitingFree> frees;
  };
  std::vector<AwaitingFrees> awaiting;
  std::size_t awaiting_count = 0;
  // Requests served by other streams' memory since this shard last grew; written by the
  // requesting thread under the lender's lock, hence atomic.
  std::atomic<std::uint32_t> borrows_in_a_row{0};
  // Operations left during which this stream keeps marks in flight because another stream
  // waits for its memory; set by that stream (hence atomic).
  std::atomic<std::uint32_t> marks_interest{0};
  // What StreamEvents::stream_serial said of the stream when the shard was created (0: unknown).
  std::uint64_t stream_serial = 0;
  // Blocks held from outside (IPC): out of `live` while held. See Note [External holds] in
  // caching_allocator.cpp.
  HeldBlocks held;
  // Whether the shard stands in its pool's list of lenders (written under the pool's
  // lenders_lock).
  std::atomic<bool> listed{false};
  MemoryStats stats;
  // What the shard may add to the device's statistics without the ledger, while `local` (See
  // Note [Device-wide peaks] in device_ledger.hpp); `ledger_slot`: its place in the ledger's
  // list of shards with headroom; changes made through the ledger since the last grant.
  Headroom headroom;
  bool local = false;
  std::size_t ledger_slot = 0;
  std::uint32_t changes_since_grant = 0;
  // See Note [Recently freed blocks] in caching_allocator.cpp.
  RecentBlocks recent;
  // See Note [Active mirrors allocated] in caching_allocator.cpp.
  bool active_mirrors_allocation = true;
  // See Note [Growing ahead] in memory_supply.hpp. `filling_since`: `allocations` when the
  // expandable arena was last empty (its allocations per mapped page count from there).
  std::uint64_t allocations = 0;
  std::uint64_t filling_since = 0;
  std::uint64_t last_growth_at = 0;
  std::size_t ahead = 0;

  // See Note [Threads sharing a stream] in thread_shards.hpp. `primary`: the stream's first
  // shard in its pool (this one, or the one whose slot shard this is); `thread_slot`: -1 for the
  // primary. The rest is the primary's: whether its threads move to slot shards when they find
  // its lock taken (`split`), its slot shards (under the pool's shards_mutex) and how many there
  // are, and the contentions counted in the window that began at `contention_window_start`
  // allocations (under the lock).
  Shard* primary = this;
  int thread_slot = -1;
  std::atomic<bool> split{false};
  std::atomic<std::uint32_t> slot_shard_count{0};
  std::array<Shard*, ThreadSlots::kSlots> slot_shards{};
  std::uint32_t contentions = 0;
  std::uint64_t contention_window_start = 0;

  // While the active counters mirror the allocated ones (See Note [Active mirrors allocated] in
  // caching_allocator.cpp), `counters`' active ones read as its allocated ones, as stats() reports.
  template <class Counters>
  void mirror_active(Counters& counters) const {
    if (active_mirrors_allocation) {
      counters.active = counters.allocation;
      counters.active_bytes = counters.allocated_bytes;
    }
  }
  // The shard's statistics as stats() reports them.
  MemoryStats observed_stats() const {
    MemoryStats out = stats;
    mirror_active(out);
    return out;
  }
  // What the shard may add to each counter before it reaches its own peak again: its peak minus
  // its current, as stats() reports them. The ledger's offer of headroom (Note [Device-wide peaks]).
  void room_to_own_peak(StatCounters<SumCounter>& room) const {
    StatCounters<SumCounter>::zip(room, stats, [](SumCounter& r, const Stat& st) { r.value = st.peak - st.current; });
    mirror_active(room);
  }

  Block* new_block() {
    if (spare_blocks.empty()) return new Block;
    Block* b = spare_blocks.back();
    spare_blocks.pop_back();
    return b;
  }
  void recycle(Block* b) {
    b->reset();
    spare_blocks.push_back(b);
  }
  ~Shard() {
    for (Block* b : spare_blocks) delete b;
  }
};

}  // namespace cudakit::memory::detail
