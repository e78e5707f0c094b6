#pragma once
// CrossStreamLending: a pool's shards lending each other the free memory whose work has
// finished (See Note [Memory across streams]), a part of the caching allocator's policy engine.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <mutex>
#include <vector>

#include "cudakit/core/log.hpp"
#include "cudakit/memory/allocator_config.hpp"
#include "cudakit/memory/snapshot.hpp"
#include "memory/detail/block.hpp"
#include "memory/detail/pool.hpp"
#include "memory/detail/shard.hpp"

namespace cudakit::memory::detail {

// Note [Memory across streams]
// Each stream has its own shard, arena and high-water mark, so memory one stream freed would never
// serve another: two serving workers peaking in turn hold both peaks (1.66 x peak allocated
// replaying serve_2w with cross_stream_reuse:off, where cudaMallocAsync's shared pool holds
// 1.33). A request that its own shard cannot serve therefore looks at the other shards of its
// pool before the arena grows, taking one shard lock at a time (so no two locks are ever waited
// for together): a free block whose last use has finished is lent. (Growing another stream's
// arena, when its finished free tail was larger than the requester's, saved little and cost
// much: train_copy's streams then traded 2,687 blocks and 13 more growths, at 1.12 against 1.10
// without it; the requester grows its own arena instead.) A lent block stays its arena's
// shard's; its free waits for the borrower's work, and the borrower's 64th borrow in a row
// without its own cache serving makes it grow its own arena instead, so that streams do not
// trade blocks for ever.
//
// "Finished" is told by marks (detail/stream_marks.hpp): every free is stamped with its
// stream's mark count, and a mark is an event recorded on the stream (or a query finding the
// stream idle); once a mark's event completes, every free stamped before it has no work left.
// The fast path of one stream pays a load and a store for the stamp; events are recorded only
// while another stream looks to this one for memory (marks_interest: for the next
// kMarkInterest operations after each look), at most one in flight, looked at every
// kQueriesEvery operations; and at a look, when the looked-at stream is known to exist. With
// `dependencies`, a block whose free is covered by the mark in flight is lent at once, the
// requester made to wait on that mark's event.
//
// A stream is touched (an event recorded, a query) only when it surely exists: during an
// allocation on it, or when cudakit created it and has not destroyed it (core's stream
// registry, with serials that are never reused, so a new stream at a destroyed one's address
// is not mistaken for it). The program may destroy a stream of its own making at any time,
// and recording an event on it then is undefined (a GPU-tier test crashed on it). Memory freed
// on such a stream is lent once a mark recorded at one of its allocations completes, or after
// a device synchronization (empty_cache, the retry before an out-of-memory error). No event is
// recorded on, and no stream made to wait from, a capturing stream (its events would mark the
// graph, not the stream); a capture's allocations go to its graph's private pool, whose shards
// lend only among themselves what their marks say is finished.

// Note [Lent blocks in the statistics]
// Statistics follow the program's operations, never the cache's own policy. A block lent to
// another stream (Note [Memory across streams]) is freed by its borrower on the stream it was
// allocated on; the program asked for no cross-stream use, and torch, for the same program,
// counts the block inactive at that free. Its return to the lender still waits for the
// borrower's work (state `returning`, awaited in the lender's `awaiting` queues), but that is
// the cache's business: the free ends its activity in the statistics there and then, and the
// return later frees it into the lender's cache without touching active_*. Lending therefore
// never stops active mirroring allocated (Note [Active mirrors allocated]).
// What raced before: the free left the block active until the lender's next allocation found
// the borrower's marks past it. A program whose threads stopped allocating read active blocks
// after freeing everything (CachingAllocatorThreads.ConcurrentStreamsReportTheDevicePeaksExactly
// failed about once in a few hundred runs on a busy machine, when the turns' last lends were not
// yet returned); TurnsOfLendingLeaveNothingActiveAfterTheFrees shows it every run.

// Note [A mark with nothing to cover]
// A stream that others look to for memory looks at its own marks every kQueriesEvery
// operations (advance_own_marks), each look an idle query or an event on a device. A look is worth
// it only when it can tell something new: a mark in flight may have completed, or a free (or a
// lent block's return) was stamped since the last mark and waits for one. Otherwise every stamp
// handed out is already covered or covered by the mark in flight, and the look is skipped. The
// lending decisions are those of always looking (a mark over nothing changes no covers()), with
// fewer driver calls (the counts per trace: notes/allocator.md, probe/event_costs.cpp).

// See Note [Memory across streams].
inline constexpr std::uint32_t kBorrowsBeforeGrowing = 64;
inline constexpr std::uint32_t kMarkInterest = 4096;  // operations a stream keeps marking once asked
inline constexpr std::uint32_t kQueriesEvery = 64;    // operations between two looks at the marks
inline constexpr std::size_t kLenderProbes = 16;       // See Note [Streams at any count].

// The lending part of the caching allocator's Engine, which derives from it (CRTP: the calls
// between the two bind statically and inline as within one class; See Note [Allocator
// internals are hidden] in block.hpp). Every shard passed in is locked as each function says.
template <class Engine>
struct [[gnu::visibility("hidden")]] CrossStreamLending {
  Engine& e() noexcept { return static_cast<Engine&>(*this); }
  const Engine& e() const noexcept { return static_cast<const Engine&>(*this); }

  // Learns how far s's stream has got, recording a mark if need be (s locked, its stream known
  // to exist). A failure to record or query only leaves the marks where they were: other
  // streams then wait longer for this one's memory, and nothing is handed out early.
  void poll_marks(Shard& s) noexcept {
    try {
      s.marks.poll(*e().events, s.stream, s.marks.stamp(), true);
    } catch (const std::exception& e) {
      s.marks_interest.store(0, std::memory_order_relaxed);
      CUDAKIT_LOG(warning, "marking stream ", reinterpret_cast<void*>(s.stream), " for other streams failed: ", e.what());
    }
  }

  // While other streams wait for s's memory (marks_interest), each allocation and free on s
  // keeps a mark in flight, asking now and then whether it has completed (s locked). At a
  // free, only a stream known to exist still is touched (See Note [Memory across streams]).
  void advance_own_marks(Shard& s, bool at_free) noexcept {
    const std::uint32_t left = s.marks_interest.load(std::memory_order_relaxed);
    s.marks_interest.store(left - 1, std::memory_order_relaxed);
    if (left % kQueriesEvery != 0) return;
    if (!s.marks.has_news_to_find()) return;  // See Note [A mark with nothing to cover].
    if (at_free && !known_to_exist(s)) return;
    poll_marks(s);
  }

  // s's stream is one cudakit knows still exists (See Note [Memory across streams]).
  bool known_to_exist(const Shard& s) const { return s.stream_serial != 0 && e().events->stream_serial(s.stream) == s.stream_serial; }

  bool lends_across_streams(const Shard& s) const {
    return e().config.cross_stream_reuse != CrossStreamReuse::off && s.pool->shard_count.load(std::memory_order_relaxed) > 1;
  }
  bool may_borrow(const Shard& s) const {
    return lends_across_streams(s) && s.borrows_in_a_row.load(std::memory_order_relaxed) < kBorrowsBeforeGrowing;
  }

  // Brings shard t's free index up to date before another shard looks in it (t locked): its
  // recent frees flushed into the index, its frees whose work has finished completed (without
  // waiting for the others).
  void settle_free_index(Shard& t) {
    e().flush_recent(t);
    if (t.pending_frees.any_deferred()) t.pending_frees.record_deferred(*e().events);
    if (t.pending_frees.any_pending()) e().complete_pending(t, false);
  }

  // Serves `requester`'s request from another stream's shard of the same pool, with no shard
  // lock held on entry: a free block whose last use has finished (or, with `dependencies`, one
  // the requesting stream is made to wait for). nullptr: the requester grows its own arena.
  void* allocate_elsewhere(std::size_t bytes, Shard& requester, std::size_t rounded, bool expandable) {
    Pool& pool = *requester.pool;
    std::lock_guard list_lock(pool.shards_mutex);  // then one shard lock at a time
    for (Shard* candidate : lender_candidates(pool, requester)) {
      Shard& t = *candidate;
      // This stream looks to t for memory: t keeps its frees marked for a while.
      t.marks_interest.store(kMarkInterest, std::memory_order_relaxed);
      std::lock_guard lock(t.lock);
      settle_free_index(t);
      // What t lent the requester comes back with the requester's own marks (every
      // kQueriesEvery of its operations): asking its stream here would cost two driver calls a
      // borrow. What t lent others, ask now.
      if (t.awaiting_count) complete_awaiting(t, true, &requester);
      if (Block* b = find_lendable(t, requester, rounded, expandable)) {
        e().remove_free(t, b);
        return lend(t, b, requester, rounded, bytes);
      }
      // Nothing free: out of the list until a block enters its index again.
      if (t.small_index.largest() == 0 && t.large_index.largest() == 0) list_lender(t, false);
    }
    return nullptr;
  }

  // Note [Streams at any count]
  // No operation may cost more as streams accumulate (a server may make a stream per request,
  // and a shard stays for every stream that ever allocated). A shard is found by its stream in
  // its pool's hash map; a borrower looks at every other shard of the pool while there are at
  // most kLenderProbes of them (the policy of Note [Memory across streams] as it is), and
  // beyond that at kLenderProbes shards of the pool's list of lenders, from a cursor that goes
  // round it: a shard enters the list when a block enters its free index, and leaves it when a
  // borrower's look finds its indexes empty (leaving is linear in the list's length, but a
  // shard leaves only after it entered, once per block that entered its index). A lender's queues of lent blocks are dropped once empty, so
  // that returning a block looks only at borrowers with blocks out.

  // The shards a borrower looks at, in order (its own stream's other shards lend without marks:
  // See Note [Threads sharing a stream] in thread_shards.hpp) (pool.shards_mutex held): at most kLenderProbes + 1,
  // held without a heap allocation, since a borrow is on the way of an allocation.
  struct Candidates {
    std::array<Shard*, kLenderProbes + 1> shards{};
    std::size_t count = 0;
    void add(Shard* s) noexcept { shards[count++] = s; }
    Shard* const* begin() const noexcept { return shards.data(); }
    Shard* const* end() const noexcept { return shards.data() + count; }
  };
  Candidates lender_candidates(Pool& pool, const Shard& requester) {
    Candidates out;
    if (pool.shards.size() <= kLenderProbes + 1) {
      for (auto& owner : pool.shards) {
        if (owner->stream != requester.stream) out.add(owner.get());
      }
      return out;
    }
    std::lock_guard lock(pool.lenders_lock);
    for (std::size_t looked = 0; looked < pool.lenders.size() && out.count < kLenderProbes; ++looked) {
      if (pool.lenders_cursor >= pool.lenders.size()) pool.lenders_cursor = 0;
      Shard* t = pool.lenders[pool.lenders_cursor++];
      if (t->stream != requester.stream) out.add(t);
    }
    return out;
  }

  // Puts s in its pool's list of lenders, or takes it out (s locked).
  void list_lender(Shard& s, bool listed = true) {
    Pool& pool = *s.pool;
    std::lock_guard lock(pool.lenders_lock);
    if (s.listed.load(std::memory_order_relaxed) == listed) return;
    s.listed.store(listed, std::memory_order_relaxed);
    if (listed) {
      pool.lenders.push_back(&s);
    } else {
      std::erase(pool.lenders, &s);
    }
  }

  // A free block of shard `t` that `requester` may use now (shard t locked).
  Block* find_lendable(Shard& t, Shard& requester, std::size_t rounded, bool expandable) {
    if (Block* b = e().find_free(t, rounded, expandable, [&](const Block* c) { return t.marks.covers(c->freed_at); })) {
      return b;
    }
    // The best fit regardless; whether its last use on t's stream has finished, the marks say.
    Block* b = e().find_free(t, rounded, expandable);
    if (!b) return nullptr;
    if (t.marks.poll(*e().events, t.stream, b->freed_at, known_to_exist(t))) return b;
    if (e().config.cross_stream_reuse != CrossStreamReuse::dependencies || !t.marks.in_flight_covers(b->freed_at) ||
        e().events->capturing(requester.stream)) {  // a wait there would join the graph
      return nullptr;
    }
    e().events->make_wait(requester.stream, t.marks.in_flight_token());
    return b;
  }

  // A lent block's free waits for its borrower's marks (shard t locked).
  void await_borrower(Shard& t, Block* b) {
    Shard* user = b->borrower;
    auto q = std::find_if(t.awaiting.begin(), t.awaiting.end(), [&](const Shard::AwaitingFrees& a) { return a.user == user; });
    if (q == t.awaiting.end()) q = t.awaiting.insert(t.awaiting.end(), Shard::AwaitingFrees{user, {}});
    q->frees.push_back(Shard::AwaitingFree{b, user->marks.stamp_use()});
    ++t.awaiting_count;
    user->marks_interest.store(kMarkInterest, std::memory_order_relaxed);  // so do the borrower's
  }

  // Completes the frees of lent blocks whose borrowers' marks cover them (shard t locked). With
  // `advance`, first polls the marks of a borrower that is behind, if its lock is free (never
  // waiting for it while holding t's: any order of two shard locks could deadlock).
  void complete_awaiting(Shard& t, bool advance, const Shard* not_asking = nullptr) {
    for (auto& q : t.awaiting) {
      if (q.frees.empty()) continue;
      Shard& user = *q.user;
      if (advance && &user != not_asking && !user.marks.covers(q.frees.back().stamp)) {
        std::unique_lock user_lock(user.lock, std::try_to_lock);
        if (user_lock.owns_lock()) user.marks.poll(*e().events, user.stream, q.frees.back().stamp, known_to_exist(user));
      }
      while (!q.frees.empty() && user.marks.covers(q.frees.front().stamp)) {
        finish_awaited(t, q.frees.front().block);
        q.frees.pop_front();
      }
    }
    std::erase_if(t.awaiting, [](const Shard::AwaitingFrees& q) { return q.frees.empty(); });
  }

  // Waits for every lent block's borrower (shard t locked; releasing cached memory).
  void wait_awaiting(Shard& t) {
    if (!t.awaiting_count) return;
    t.pool->provider->synchronize(t.stream);  // all work, whichever streams are still alive
    for (auto& q : t.awaiting) {
      for (const auto& f : q.frees) finish_awaited(t, f.block);
    }
    t.awaiting.clear();
  }

  // A lent block's return: inactive since its free (See Note [Lent blocks in the statistics]).
  void finish_awaited(Shard& t, Block* b) {
    --t.awaiting_count;
    e().count_inactive_split(t, b, false);  // free_block counts it again, merged
    e().history.trace(TraceEntry::Action::free_completed, b->ptr, b->size, t.stream);
    e().free_block(t, b);
  }

  // Gives free block `b` of shard `t` (not indexed) to `requester`: it stays t's (its arena's
  // shard frees it), and its free waits for the requester's work, as record_stream does.
  void* lend(Shard& t, Block* b, Shard& requester, std::size_t rounded, std::size_t bytes) {
    void* p = e().take(t, b, rounded, bytes);
    b->borrower = &requester;
    b->extra_streams.push_back(requester.stream);
    requester.borrows_in_a_row.fetch_add(1, std::memory_order_relaxed);
    ++t.stats.num_cross_stream_reuses;
    return p;
  }
};

}  // namespace cudakit::memory::detail
