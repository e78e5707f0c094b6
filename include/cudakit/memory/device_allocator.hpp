#pragma once
// @brief The default caching allocator of each device and torch.cuda.memory's functions over it.
//
// Stream ordering: memory returned by allocate(bytes, s) may be used by work queued on `s`
// right away. deallocate() makes the block reusable by later allocations on `s` at once (work
// queued on `s` later runs after the work that used it); other streams' work that used it must
// be declared with record_stream(), and the block is reused only after that work has finished.
//
// Each device's allocator is created on first use, configured from CUDAKIT_ALLOC_CONF.
//
// Backends (torch.cuda.memory's allocator backends): these functions are served by cudakit's
// caching allocator ("native", the default), by CUDA's cudaMallocAsync on each device's default
// pool (CUDAKIT_ALLOC_CONF=backend:cudaMallocAsync), by cudaMalloc/cudaFree for every allocation
// (CUDAKIT_NO_CUDA_MEMORY_CACHING=1: caching off, for compute-sanitizer), or by a
// PluggableAllocator installed with change_current_allocator(). The backend is chosen at the
// first call that needs it and is final from the first allocation on. Under every backend,
// allocations routed to a MemPool or a graph's private pool come from the caching allocator,
// and the statistics include them. See Note [Allocator backends] in
// src/memory/detail/allocator_backend.hpp.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "cudakit/core/optional_stream.hpp"
#include "cudakit/memory/caching_allocator.hpp"
#include "cudakit/memory/memory_stats.hpp"
#include "cudakit/memory/nested_stats.hpp"
#include "cudakit/memory/pluggable_allocator.hpp"

namespace cudakit::memory {

// `bytes` of device memory on `stream`'s device, for use on `stream`, from the calling thread's
// current pool (use_mem_pool) or the default pool. Returns nullptr for 0 bytes.
// @throws OutOfMemoryError (after freeing the cache and retrying) with a full report.
// Left out, `stream` is the current device's current stream.
[[nodiscard]] void* allocate(std::size_t bytes, OptionalStream stream = {});
// Returns memory from allocate(). Null is ignored.
// @throws InvalidArgumentError for a pointer allocate() did not return, or one already freed.
void deallocate(void* ptr);
// Marks `ptr` as used by `stream`, so that its reuse waits for the work queued on `stream` so
// far (torch's Tensor.record_stream). @throws InvalidArgumentError as deallocate.
void record_stream(void* ptr, StreamRef stream);

// The caching allocator of `device` (-1: current), created on first use: the native backend's,
// and the home of the device's pools under every backend.
[[nodiscard]] CachingAllocator& device_allocator(int device = -1);
// The device allocator (of any device) whose memory `ptr` lies in; nullptr when none. Creates
// no allocator.
[[nodiscard]] CachingAllocator* device_allocator_owning(const void* ptr) noexcept;

// torch.cuda.memory_stats(device): the statistics; MemoryStats::to_map() gives torch's flat dict
// ("allocated_bytes.all.current" -> value), memory_stats_as_nested_dict() the tree it is made of.
// torch.cuda.memory.change_current_allocator: `allocator`'s functions serve every later
// allocation of every device. The functions are copied; a shared library stays loaded.
// @throws StateError ("Can't swap an already initialized allocator") once the current backend
// has served an allocation: memory it handed out must go back to it.
void change_current_allocator(const PluggableAllocator& allocator);
// torch.cuda.memory.get_allocator_backend(): "native" (also with caching off, as torch names
// it), "cudaMallocAsync", or "pluggable" after change_current_allocator().
// @throws InvalidArgumentError for a malformed CUDAKIT_ALLOC_CONF or CUDAKIT_NO_CUDA_MEMORY_CACHING.
[[nodiscard]] std::string get_allocator_backend();

[[nodiscard]] MemoryStats memory_stats(int device = -1);
[[nodiscard]] NestedStats memory_stats_as_nested_dict(int device = -1);
[[nodiscard]] std::size_t memory_allocated(int device = -1);
[[nodiscard]] std::size_t max_memory_allocated(int device = -1);
[[nodiscard]] std::size_t memory_reserved(int device = -1);
[[nodiscard]] std::size_t max_memory_reserved(int device = -1);
void reset_peak_memory_stats(int device = -1);
void reset_accumulated_memory_stats(int device = -1);
// Returns cached, unused memory of every device whose allocator exists to the driver.
void empty_cache();
// Limits reserved memory on `device` to fraction * its total memory.
// @throws InvalidArgumentError unless 0 < fraction <= 1.
void set_per_process_memory_fraction(double fraction, int device = -1);
// The limit set_per_process_memory_fraction() or CUDAKIT_ALLOC_CONF set (1.0: none).
[[nodiscard]] double get_per_process_memory_fraction(int device = -1);
// torch.cuda.memory._set_allocator_settings: changes the settings of every device's allocator
// that exists, and of those created later, with CUDAKIT_ALLOC_CONF's syntax. Only
// AllocatorConfig::kRuntimeKeys may be named (See Note [Settings at run time] in
// allocator_config.cpp); keys not named keep their value.
// @throws InvalidArgumentError naming the key and value, with nothing changed on any device, for
// an unknown key, a key that cannot change at run time or a bad value.
void set_allocator_settings(std::string_view settings);
// Adds `observer` to `device`'s allocator (-1: current): it is called before every
// OutOfMemoryError that allocator throws (torch's _cuda_attach_out_of_memory_observer; see
// OutOfMemoryObserver). Returns an id for CachingAllocator::detach_oom_observer.
// @throws InvalidArgumentError for an empty function; StateError under a backend other than
// the native caching one (as torch's).
std::uint64_t attach_out_of_memory_observer(OutOfMemoryObserver observer, int device = -1);
// torch.cuda.memory_summary(): a readable table of the statistics.
[[nodiscard]] std::string memory_summary(int device = -1);

}  // namespace cudakit::memory
