#pragma once
// GraphPoolLease: a graph's share of its memory pool.

#include <memory>

#include "cudakit/memory/caching_allocator.hpp"

namespace cudakit::graphs::detail {

// Note [Graph pools]
// Every capture allocates from a pool of the device's CachingAllocator, so that memory the
// graph uses keeps its address across replays and is never handed to other work. Captures may
// share a pool (torch's pool=other_graph.pool()); the pool must then live until the last graph
// using it lets go. A lease is that share: graphs capturing into one pool hold one shared lease,
// and its destruction releases the pool — only when the lease created it, so a pool made by a
// MemPool stays the MemPool's.
//
// A pool the lease creates draws its segments through CaptureSafeSegmentProvider: it obtains
// memory with cudaMalloc under cudaStreamCaptureModeRelaxed, because the caching allocator may
// need a new segment in the middle of a capture and the global mode forbids cudaMalloc there
// (torch's cudaMallocMaybeCapturing does the same). A captured cudaMalloc is safe: it is not a
// stream operation, and the memory is not freed before the graph is gone (the pool is released
// only after the graph is destroyed). Expandable segments are not used in graph pools: mapping
// memory mid-capture has no such exemption. A lease holds its pool (CachingAllocator::hold_pool):
// See Note [A graph's pool keeps its free memory] in src/memory/detail/memory_supply.hpp.
class GraphPoolLease {
 public:
  // The lease on `pool` of `device` ({}: a new pool), shared with graphs that hold it already.
  static std::shared_ptr<GraphPoolLease> acquire(int device, memory::PoolId pool);
  ~GraphPoolLease();
  GraphPoolLease(const GraphPoolLease&) = delete;
  GraphPoolLease& operator=(const GraphPoolLease&) = delete;

  [[nodiscard]] memory::PoolId id() const noexcept { return id_; }
  [[nodiscard]] int device() const noexcept { return device_; }

  struct Token;  // the constructor is for acquire() only
  GraphPoolLease(Token, int device, memory::PoolId id, bool owns_pool);

 private:
  int device_;
  memory::PoolId id_;
  bool owns_pool_;
};

}  // namespace cudakit::graphs::detail
