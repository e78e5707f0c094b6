#pragma once
// Pool: one memory pool of an allocator (the default one, a graph's or a user's), its provider
// and its shards, one per stream that allocated from it.

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "cudakit/memory/allocator_config.hpp"
#include "cudakit/memory/pool_id.hpp"
#include "cudakit/memory/segment_provider.hpp"
#include "memory/detail/shard.hpp"

namespace cudakit::memory::detail {

struct [[gnu::visibility("hidden")]] Pool {
  PoolId id;
  std::shared_ptr<SegmentProvider> provider;
  bool expandable = false;  // expandable arenas: the option is on and the provider maps pages
  mutable std::mutex shards_mutex;
  std::vector<std::unique_ptr<Shard>> shards;
  // shards.size(), readable without the mutex: whether other streams could lend.
  std::atomic<std::size_t> shard_count{0};
  bool released = false;
};

// What the per-process memory fraction lets `pool` reserve.
inline std::size_t allowed_bytes(const Pool& pool, const AllocatorConfig& config) {
  const std::size_t total = pool.provider->total_memory();
  return static_cast<std::size_t>(static_cast<double>(total) * config.per_process_memory_fraction);
}

}  // namespace cudakit::memory::detail
