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
using UserAllocFn = void* (*)(std::size_t size, int device, cudaStream_t stream);
using UserFreeFn = void (*)(void* ptr, std::size_t size, int device, cudaStream_t stream);

class MemPool {
 public:
  // A pool on `device` (-1: current) drawing from the device's memory, with torch.cuda.MemPool's
  // use_on_oom and no_split (PoolOptions): MemPool pool({.use_on_oom = true}).
  explicit MemPool(int device = -1);
  explicit MemPool(PoolOptions options, int device = -1);
  // A pool whose segments come from alloc_fn/free_fn (no expandable ranges: the functions
  // allocate whole segments). @throws InvalidArgumentError if either function is null.
  MemPool(UserAllocFn alloc_fn, UserFreeFn free_fn, int device = -1, PoolOptions options = {});
  // Releases the pool's cached memory; memory still allocated from it stays valid and returns
  // to the pool's provider when freed.
  ~MemPool();
  MemPool(const MemPool&) = delete;
  MemPool& operator=(const MemPool&) = delete;

  [[nodiscard]] PoolId id() const noexcept { return id_; }
  [[nodiscard]] int device() const noexcept { return device_; }
  [[nodiscard]] const PoolOptions& options() const noexcept { return options_; }
  // Threads currently routing allocations here (use_mem_pool scopes alive), plus one for the
  // MemPool object itself, as torch's use_count().
  [[nodiscard]] int use_count() const noexcept;
  [[nodiscard]] std::size_t reserved_bytes() const;
  [[nodiscard]] std::size_t allocated_bytes() const;
  // The pool's segments and their blocks (torch's MemPool.snapshot()); the history and the
  // statistics are the device's, which do not say which pool an event was in: the history is
  // left empty, the statistics are the whole device's.
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
  explicit MemPoolContext(MemPool& pool);
  ~MemPoolContext();
  MemPoolContext(const MemPoolContext&) = delete;
  MemPoolContext& operator=(const MemPoolContext&) = delete;

 private:
  int device_;
  PoolId previous_;
  std::shared_ptr<int> users_;
};
using use_mem_pool = MemPoolContext;

// The pool the calling thread's allocations on `device` go to ({0,0}: the default pool).
[[nodiscard]] PoolId current_pool(int device);
// Routes the calling thread's allocations on `device` to `pool` (as use_mem_pool does, without
// a MemPool object) and returns the pool they went to before. Graph capture uses it to send the
// capturing thread's allocations to the graph's private pool.
PoolId exchange_current_pool(int device, PoolId pool);

}  // namespace cudakit::memory
