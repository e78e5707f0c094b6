#pragma once
// @brief MemPool and use_mem_pool (torch.cuda.MemPool, torch.cuda.use_mem_pool): a separate pool of
// device memory, optionally drawn from user allocation functions (torch's
// CUDAPluggableAllocator), that the calling thread's allocations can be routed to.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>

#include "cudakit/memory/caching_allocator.hpp"
#include "cudakit/memory/pool_options.hpp"

namespace cudakit::memory {

// A pair of C functions that provide a pool's memory.
// Allocates a whole segment of `size` bytes on `device` for use on `stream`; nullptr when memory
// is exhausted (the allocator then frees its cache and retries, or throws OutOfMemoryError).
using UserAllocFn = void* (*)(std::size_t size, int device, cudaStream_t stream);
// Frees a segment UserAllocFn returned; `size` and `stream` are the allocation's. Must not throw.
using UserFreeFn = void (*)(void* ptr, std::size_t size, int device, cudaStream_t stream);

// A memory pool of one device's caching allocator (torch.cuda.MemPool). Allocations reach it
// through MemPoolContext (use_mem_pool) on the threads that opened one. Not copyable; its
// statistics and snapshot may be read from any thread.
class MemPool {
 public:
  // A pool on `device` (-1: current) drawing from the device's memory, with torch.cuda.MemPool's
  // use_on_oom and no_split (PoolOptions): MemPool pool({.use_on_oom = true}).
  // @param device the device ordinal; -1 means the current device.
  // @throws InvalidArgumentError for an ordinal out of range.
  // @throws CudaError when no CUDA device is available.
  explicit MemPool(int device = -1);
  // A pool with `options`, as above.
  // @param options how the pool serves requests (use_on_oom, no_split).
  // @param device the device ordinal; -1 means the current device.
  // @throws InvalidArgumentError for an ordinal out of range.
  // @throws CudaError when no CUDA device is available.
  explicit MemPool(PoolOptions options, int device = -1);
  // A pool whose segments come from alloc_fn/free_fn (no expandable ranges: the functions
  // allocate whole segments). The device is synchronized before memory is returned to free_fn
  // (empty_cache(), release).
  // @param alloc_fn allocates a segment.
  // @param free_fn frees one.
  // @param device the device ordinal; -1 means the current device.
  // @param options how the pool serves requests.
  // @throws InvalidArgumentError if either function is null, or for an ordinal out of range.
  // @throws CudaError when no CUDA device is available.
  MemPool(UserAllocFn alloc_fn, UserFreeFn free_fn, int device = -1, PoolOptions options = {});
  // Releases the pool's cached memory; memory still allocated from it stays valid and returns
  // to the pool's provider when freed. Blocks as empty_cache() does; errors are logged.
  ~MemPool();
  // Not copyable: the pool has one owner.
  MemPool(const MemPool&) = delete;
  // Not copyable: the pool has one owner.
  MemPool& operator=(const MemPool&) = delete;

  // @return the pool's id in the device's allocator.
  [[nodiscard]] PoolId id() const noexcept { return id_; }
  // @return the device ordinal (resolved at construction).
  [[nodiscard]] int device() const noexcept { return device_; }
  // @return the options given at construction.
  [[nodiscard]] const PoolOptions& options() const noexcept { return options_; }
  // Threads currently routing allocations here (use_mem_pool scopes alive), plus one for the
  // MemPool object itself, as torch's use_count().
  // @return the count, at least 1.
  [[nodiscard]] int use_count() const noexcept;
  // @return the bytes the pool holds from its provider (allocated or cached).
  [[nodiscard]] std::size_t reserved_bytes() const;
  // @return the bytes of the pool's live allocations (rounded sizes).
  [[nodiscard]] std::size_t allocated_bytes() const;
  // The pool's segments and their blocks (torch's MemPool.snapshot()); the history and the
  // statistics are the device's, which do not say which pool an event was in: the history is
  // left empty, the statistics are the whole device's.
  // @return the snapshot; no device work, no synchronization.
  [[nodiscard]] MemorySnapshot snapshot() const;

 private:
  friend class MemPoolContext;
  int device_;
  PoolId id_;
  PoolOptions options_;
  std::shared_ptr<int> users_;  // use_count() - 1 scopes
};

// RAII: while alive, the calling thread's allocations on the pool's device come from the pool.
// Scopes nest; the innermost wins. Other threads are unaffected. `use_mem_pool` is torch's name
// for it (`with torch.cuda.use_mem_pool(pool):`), kept as an alias by the naming rule
// (docs/ARCHITECTURE.md, "Naming").
class MemPoolContext {
 public:
  // Routes the calling thread's allocations on the pool's device to `pool`.
  // @param pool the pool; it must outlive the context.
  explicit MemPoolContext(MemPool& pool);
  // Routes the thread's allocations back to the pool that was current before. Must end on the
  // thread that made it, innermost first.
  ~MemPoolContext();
  // Not copyable: a scope ends once.
  MemPoolContext(const MemPoolContext&) = delete;
  // Not copyable: a scope ends once.
  MemPoolContext& operator=(const MemPoolContext&) = delete;

 private:
  int device_;
  PoolId previous_;
  std::shared_ptr<int> users_;
};
// torch's name for MemPoolContext (`with torch.cuda.use_mem_pool(pool):`).
using use_mem_pool = MemPoolContext;

// The pool the calling thread's allocations on `device` go to ({0,0}: the default pool).
// @param device a device ordinal, 0 to 63 (-1 is not resolved here).
// @return the thread's current pool on that device.
// @throws InvalidArgumentError for an ordinal outside 0 to 63.
[[nodiscard]] PoolId current_pool(int device);
// Routes the calling thread's allocations on `device` to `pool` (as use_mem_pool does, without
// a MemPool object) and returns the pool they went to before. Graph capture uses it to send the
// capturing thread's allocations to the graph's private pool.
// @param device a device ordinal, 0 to 63 (-1 is not resolved here).
// @param pool the pool to route to; {0, 0} for the default pool. Not checked until an allocation.
// @return the pool that was current before.
// @throws InvalidArgumentError for an ordinal outside 0 to 63.
PoolId exchange_current_pool(int device, PoolId pool);

}  // namespace cudakit::memory
