#pragma once
// Pool: one memory pool of an allocator (the default one, a graph's or a user's), its provider
// and its shards, one per stream that allocated from it.

#include <memory>
#include <mutex>
#include <vector>

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
  bool released = false;
};

}  // namespace cudakit::memory::detail
