#pragma once
// @brief PoolOptions: how a memory pool (MemPool, CachingAllocator::create_pool) serves requests —
// torch.cuda.MemPool's use_on_oom and no_split.

namespace cudakit::memory {

// The options of one pool, fixed at its creation.
struct PoolOptions {
  // When a request to the default pool cannot be served by the memory the device has left, the
  // pool's free cached blocks on the requesting stream may serve it, before the default pool's
  // cache is freed and the request retried (torch's use_on_oom). The block then belongs to this
  // pool, and returns to it when freed.
  bool use_on_oom = false;
  // Blocks of the pool are never split: every allocation takes a whole segment (or a whole
  // cached block), so that no two allocations share one (torch's no_split; for memory that is
  // registered or shared segment by segment). Such a pool never uses expandable arenas.
  bool no_split = false;
};

}  // namespace cudakit::memory
