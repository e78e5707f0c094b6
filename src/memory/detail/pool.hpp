#pragma once
// Pool: one memory pool of an allocator (the default one, a graph's or a user's), its provider
// and its shards, one per stream that allocated from it.

#include <atomic>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "cudakit/memory/allocator_config.hpp"
#include "cudakit/memory/pool_id.hpp"
#include "cudakit/memory/pool_options.hpp"
#include "cudakit/memory/segment_provider.hpp"
#include "memory/detail/shard.hpp"

namespace cudakit::memory::detail {

struct [[gnu::visibility("hidden")]] Pool {
  PoolId id;
  std::shared_ptr<SegmentProvider> provider;
  bool expandable = false;  // expandable arenas: the option is on and the provider maps pages
  PoolOptions options;      // See Note [Pool options] in caching_allocator.cpp.
  mutable std::mutex shards_mutex;
  std::vector<std::unique_ptr<Shard>> shards;
  std::unordered_map<StreamKey, Shard*> shard_of_stream;  // under shards_mutex
  // shards.size(), readable without the mutex: whether other streams could lend.
  std::atomic<std::size_t> shard_count{0};
  // Shards that may hold free blocks to lend, in the order they came to hold them (See Note
  // [Streams at any count] in caching_allocator.cpp); a shard is listed once (Shard::listed).
  SpinLock lenders_lock;
  std::vector<Shard*> lenders;  // under lenders_lock
  std::size_t lenders_cursor = 0;  // under lenders_lock
  bool released = false;
  // Users whose work still reads the pool's free memory (graphs captured into it): while there
  // are any, only release_pool returns its cached memory. See Note [A graph's pool keeps its
  // free memory] in memory_supply.hpp.
  std::atomic<int> holds{0};
  [[nodiscard]] bool held() const noexcept { return holds.load(std::memory_order_acquire) > 0; }
  void release_hold() noexcept {  // never below zero: a hold released twice is ignored
    int n = holds.load(std::memory_order_acquire);
    while (n > 0 && !holds.compare_exchange_weak(n, n - 1, std::memory_order_acq_rel)) {
    }
  }
};

// What the per-process memory fraction lets `pool` reserve.
inline std::size_t allowed_bytes(const Pool& pool, const AllocatorConfig& config) {
  const std::size_t total = pool.provider->total_memory();
  return static_cast<std::size_t>(static_cast<double>(total) * config.per_process_memory_fraction);
}

}  // namespace cudakit::memory::detail
