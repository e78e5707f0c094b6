#pragma once
// AllocatorBackend: what serves the device-wide allocation functions of device_allocator.hpp
// (memory::allocate, deallocate, record_stream, the statistics, empty_cache, summary, snapshot).
//
// Note [Allocator backends]
// torch.cuda.memory has one process-wide allocator object behind its functions, chosen once:
// the native caching allocator, CUDA's cudaMallocAsync (PYTORCH_CUDA_ALLOC_CONF's
// backend:cudaMallocAsync), or a CUDAPluggableAllocator installed by change_current_allocator
// before the first allocation; PYTORCH_NO_CUDA_MEMORY_CACHING turns the native one's caching off.
// cudakit keeps that shape:
//
//   native           the CachingAllocator of each device (device_allocator()), the default;
//   cudaMallocAsync  cudaMallocFromPoolAsync / cudaFreeAsync on the device's default pool
//                    (async_backend.cpp);
//   caching off      cudaMalloc / cudaFree for every allocation (uncached_backend.cpp), with
//                    CUDAKIT_NO_CUDA_MEMORY_CACHING=1, so that compute-sanitizer sees each one;
//   pluggable        a PluggableAllocator's functions (pluggable_allocator.cpp).
//
// The choice is made at the first call that needs it (CUDAKIT_ALLOC_CONF, then
// CUDAKIT_NO_CUDA_MEMORY_CACHING) and becomes final at the first allocation: after that,
// change_current_allocator refuses, as torch's does ("Can't swap an already initialized
// allocator"), since memory already handed out must go back to the allocator it came from.
//
// The native backend keeps its fast path: memory::allocate tests one relaxed atomic (the route,
// set to `native` by the first allocation) and then tail-calls CachingAllocator::allocate as
// before; only the other backends go through the virtual functions below.
//
// Pools are the caching allocator's whatever the backend: an allocation routed to a MemPool or
// to a graph's private pool (use_mem_pool, graph capture) comes from the native allocator of its
// device, so graphs capture without the backend's calls in the graph, and the device-wide
// statistics of a non-native backend add those pools' statistics to the backend's own.

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "cudakit/core/stream_ref.hpp"
#include "cudakit/memory/memory_stats.hpp"
#include "cudakit/memory/snapshot.hpp"

namespace cudakit::memory {
class PluggableAllocator;
}

namespace cudakit::memory::detail {

// Devices the device-wide allocator serves (ordinals 0 .. kMaxDevices - 1).
inline constexpr int kMaxDevices = 64;

struct LiveAllocation {
  int device = 0;
  std::size_t bytes = 0;
};

class AllocatorBackend {
 public:
  virtual ~AllocatorBackend() = default;

  // get_allocator_backend(): "native", "cudaMallocAsync", "pluggable".
  [[nodiscard]] virtual std::string name() const = 0;
  // False for a backend that calls no CUDA itself (pluggable): its functions may then take a
  // device ordinal without asking the runtime, and the host tier exercises it without a GPU.
  [[nodiscard]] virtual bool uses_cuda() const noexcept { return true; }
  // Which backend, with what settings, for summaries and errors ("backend:cudaMallocAsync").
  [[nodiscard]] virtual std::string settings() const { return "backend:" + name(); }

  // `bytes` for use on `stream`, on stream.device(). nullptr for 0 bytes.
  // @throws OutOfMemoryError with a report.
  [[nodiscard]] virtual void* allocate(std::size_t bytes, StreamRef stream) = 0;
  // False, with nothing done, when `ptr` is not a live allocation of this backend.
  [[nodiscard]] virtual bool deallocate_if_owned(void* ptr) = 0;
  [[nodiscard]] virtual bool record_stream_if_owned(void* ptr, StreamRef stream) = 0;
  [[nodiscard]] virtual std::optional<LiveAllocation> find(const void* ptr) const = 0;

  [[nodiscard]] virtual MemoryStats stats(int device) const = 0;
  virtual void reset_peak_stats(int device) = 0;
  virtual void reset_accumulated_stats(int device) = 0;
  // Every device's cached memory back to the driver (after the pending frees).
  virtual void empty_cache() = 0;
  // @throws InvalidArgumentError unless 0 < fraction <= 1.
  virtual void set_memory_fraction(double fraction, int device) = 0;
  [[nodiscard]] virtual double memory_fraction(int device) const = 0;
  [[nodiscard]] virtual std::string summary(int device) const = 0;
  [[nodiscard]] virtual MemorySnapshot snapshot(int device) const = 0;
};

// The backends other than native, each in its own file.
[[nodiscard]] std::unique_ptr<AllocatorBackend> make_cuda_malloc_async_backend();
[[nodiscard]] std::unique_ptr<AllocatorBackend> make_uncached_backend();
[[nodiscard]] std::unique_ptr<AllocatorBackend> make_pluggable_backend(const PluggableAllocator& allocator);

// CUDAKIT_NO_CUDA_MEMORY_CACHING's value: "1" turns caching off, "0" or "" leaves it on.
// @throws InvalidArgumentError naming the variable for anything else.
[[nodiscard]] bool caching_disabled_by(std::string_view value);

// The table torch.cuda.memory_summary() prints, for `stats` of `device`; `settings` goes in the
// header line (the allocator's config, or the backend's name).
[[nodiscard]] std::string format_memory_summary(const MemoryStats& stats, int device,
                                                std::string_view settings);

}  // namespace cudakit::memory::detail
