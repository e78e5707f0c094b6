#pragma once
// OutOfMemoryPath: what the caching allocator does when a request finds no memory: the
// use_on_oom pools (See Note [Pool options]), the cache freed and the request retried, then the
// report and the error; a part of its policy engine.

#include <cstddef>
#include <mutex>
#include <string>
#include <vector>

#include "cudakit/core/error.hpp"
#include "cudakit/core/sync_debug_mode.hpp"
#include "cudakit/memory/snapshot.hpp"
#include "memory/detail/block.hpp"
#include "memory/detail/oom_report.hpp"
#include "memory/detail/pool.hpp"
#include "memory/detail/shard.hpp"

namespace cudakit::memory::detail {

// Note [Pool options]
// torch.cuda.MemPool's two options. no_split: should_split() says no for the pool's blocks, so
// an allocation takes a whole segment or a whole cached block; the pool never uses expandable
// arenas, whose one growing range would otherwise be one block given away whole. use_on_oom:
// a request to the default pool that the memory left cannot serve (its arena cannot grow or no
// new segment can be had) first looks for a free cached block in the use_on_oom pools, on the
// requesting stream, in the order they were created, before the default pool's cache is freed
// and the request retried: torch's try_mempool_fallback, which also comes before the freeing
// ("before expensive memory freeing operations") and also only takes blocks the pool has
// cached, never new memory for it. Requests to any other pool go straight to the retry. The
// block stays the pool's: its statistics, and its return there when freed.


// The out-of-memory part of the caching allocator's Engine, which derives from it (CRTP; See
// Note [Allocator internals are hidden] in block.hpp).
template <class Engine>
struct [[gnu::visibility("hidden")]] OutOfMemoryPath {
  Engine& e() noexcept { return static_cast<Engine&>(*this); }
  const Engine& e() const noexcept { return static_cast<const Engine&>(*this); }

  // The slow path: free every cache, retry once, then report.
  void* allocate_after_release(std::size_t bytes, Shard& s, std::size_t rounded, bool expandable) {
    // However many takes in a row: See Note [Threads sharing a stream] in thread_shards.hpp.
    if (e().has_stream_siblings(s)) {
      if (void* p = e().allocate_from_siblings(bytes, s, rounded, expandable, /*last_resort=*/true)) return p;
    }
    if (s.pool->id.is_default()) {
      if (void* p = allocate_from_oom_pools(bytes, s.stream, rounded)) return p;
    }
    // See Note [No cache release during capture].
    const bool capturing = e().events->capturing(s.stream);
    if (!capturing) {
      cudakit::detail::check_synchronization("CachingAllocator::allocate (freeing the cache to retry)");
      e().retries.fetch_add(1);
      e().release_all_cached();
      std::lock_guard lock(s.lock);
      Block* b = e().find_free(s, rounded, expandable);
      if (b) e().remove_free(s, b);
      else b = expandable ? e().grow_arena(s, rounded) : e().new_segment(s, rounded);
      if (b) return e().take(s, b, rounded, bytes);
    }
    report_oom(bytes, s, capturing);
  }

  // Counts, traces and reports the failed request, then throws its OutOfMemoryError. The report
  // visits every shard, this one included: built with no lock held.
  [[noreturn]] void report_oom(std::size_t bytes, Shard& s, bool capturing) {
    e().ooms.fetch_add(1);
    e().history.trace(TraceEntry::Action::oom, nullptr, bytes, s.stream);
    OutOfMemoryInfo info = detail::gather_oom_info(e().device, bytes, s, capturing, e().all_shards());
    std::string report = detail::oom_report(info, *s.pool, e().current_config());
    e().oom_observers.notify(info, report);
    throw OutOfMemoryError("CachingAllocator::allocate", report, bytes);
  }

  // A free cached block of a use_on_oom pool on `stream`, taken for the request; nullptr when
  // none has one (See Note [Pool options]). No lock held.
  void* allocate_from_oom_pools(std::size_t bytes, StreamKey stream, std::size_t rounded) {
    std::vector<Pool*> fallbacks;
    {
      std::lock_guard lock(e().pools_mutex);
      for (auto& [id, pool] : e().pools) {
        if (pool->options.use_on_oom && !pool->released) fallbacks.push_back(pool.get());
      }
    }
    // Pool ids count up from creation: the map's order is the order of creation.
    for (Pool* pool : fallbacks) {
      // The stream's shards: one, or with threads sharing it several (See Note [Threads sharing
      // a stream] in thread_shards.hpp); shards are never removed, so the list stays valid.
      std::vector<Shard*> shards;
      {
        std::lock_guard lock(pool->shards_mutex);
        for (auto& candidate : pool->shards) {
          if (candidate->stream == stream) shards.push_back(candidate.get());
        }
      }
      for (Shard* shard : shards) {
        std::lock_guard lock(shard->lock);
        e().flush_recent(*shard);
        if (Block* b = e().find_free(*shard, rounded, pool->expandable)) {
          e().remove_free(*shard, b);
          return e().take(*shard, b, rounded, bytes);
        }
      }
    }
    return nullptr;
  }
};

}  // namespace cudakit::memory::detail
