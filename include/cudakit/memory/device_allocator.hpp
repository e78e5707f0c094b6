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
// Statistics (memory_stats() and the functions after it) take `device` as an ordinal, -1
// meaning the current device; they read counters only (no synchronization, no device work) and
// include the memory of the device's pools under every backend. Each throws
// InvalidArgumentError for an ordinal out of range, and CudaError when no CUDA device is
// available (the pluggable backend, which calls no CUDA, takes an explicit ordinal as it is).
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
//
// Stream-ordered on `stream` (the current device's current stream when omitted): work queued on
// it may use the memory at once. The native backend queues at most event records and waits
// (CachingAllocator::allocate) and blocks the host only where it returns cached memory to the
// driver, which synchronizes first (past garbage_collection_threshold, or before retrying a
// request that found no memory); cudaMallocAsync enqueues the allocation on `stream`.
// Thread-safe.
// @param bytes the size requested, in bytes (rounded up by the allocator).
// @param stream the stream that will use the memory; its device is the memory's device.
// @return the device address, or nullptr when `bytes` is 0.
// @throws OutOfMemoryError (after freeing the cache and retrying) with a full report.
// @throws InvalidArgumentError for a stream whose device is out of range, or a current pool
// (use_mem_pool) that was released.
// @throws CudaError when no CUDA device is available (native and cudaMallocAsync backends).
[[nodiscard]] void* allocate(std::size_t bytes, OptionalStream stream = {});
// Returns memory from allocate(). Null is ignored.
//
// Stream-ordered on the stream the memory was allocated on: later allocations on it may reuse
// the memory at once, while streams named by record_stream() are waited for through events
// (the host does not wait). Returns without waiting for the device.
// @param ptr an address allocate() returned (under any backend; a pool's memory too).
// @throws InvalidArgumentError for a pointer allocate() did not return, or one already freed.
void deallocate(void* ptr);
// Marks `ptr` as used by `stream`, so that its reuse waits for the work queued on `stream` so
// far (torch's Tensor.record_stream). The wait is taken at deallocate(), through an event
// recorded on `stream` then; this call records nothing and does not block.
// @param ptr a live allocation from allocate().
// @param stream a stream other than the allocating one that uses the memory.
// @throws InvalidArgumentError for a pointer allocate() did not return, or one already freed.
void record_stream(void* ptr, StreamRef stream);

// The caching allocator of `device` (-1: current), created on first use: the native backend's,
// and the home of the device's pools under every backend. Thread-safe; it lives until the
// process exits.
// @param device the device ordinal; -1 means the current device.
// @return the device's allocator, configured from CUDAKIT_ALLOC_CONF (and later
// set_allocator_settings() calls) when created.
// @throws InvalidArgumentError for an ordinal out of range.
// @throws CudaError when no CUDA device is available.
[[nodiscard]] CachingAllocator& device_allocator(int device = -1);
// The device allocator (of any device) whose memory `ptr` lies in; nullptr when none. Creates
// no allocator.
// @param ptr any address (null gives nullptr).
// @return the owning allocator, or nullptr.
[[nodiscard]] CachingAllocator* device_allocator_owning(const void* ptr) noexcept;

// torch.cuda.memory.change_current_allocator: `allocator`'s functions serve every later
// allocation of every device. The functions are copied; a shared library stays loaded.
// @throws StateError ("Can't swap an already initialized allocator") once the current backend
// has served an allocation: memory it handed out must go back to it.
// @param allocator the functions to install (see PluggableAllocator).
void change_current_allocator(const PluggableAllocator& allocator);
// torch.cuda.memory.get_allocator_backend(): "native" (also with caching off, as torch names
// it), "cudaMallocAsync", or "pluggable" after change_current_allocator().
// @return the backend's name.
// @throws InvalidArgumentError for a malformed CUDAKIT_ALLOC_CONF or CUDAKIT_NO_CUDA_MEMORY_CACHING.
[[nodiscard]] std::string get_allocator_backend();

// torch.cuda.memory_stats(device): the statistics; MemoryStats::to_map() gives torch's flat dict
// ("allocated_bytes.all.current" -> value), memory_stats_as_nested_dict() the tree it is made of.
// @param device the device ordinal; -1 means the current device.
// @return a copy of the device's statistics.
[[nodiscard]] MemoryStats memory_stats(int device = -1);
// torch.cuda.memory_stats(device) as torch's nested dict (memory_stats().to_nested()).
// @param device the device ordinal; -1 means the current device.
// @return the statistics as a tree keyed by torch's names.
[[nodiscard]] NestedStats memory_stats_as_nested_dict(int device = -1);
// torch.cuda.memory_allocated: bytes in live allocations (rounded sizes), all pools.
// @param device the device ordinal; -1 means the current device.
// @return allocated_bytes.all.current.
[[nodiscard]] std::size_t memory_allocated(int device = -1);
// torch.cuda.max_memory_allocated: the peak of memory_allocated() since the start or the last
// reset_peak_memory_stats().
// @param device the device ordinal; -1 means the current device.
// @return allocated_bytes.all.peak.
[[nodiscard]] std::size_t max_memory_allocated(int device = -1);
// torch.cuda.memory_reserved: bytes obtained from the driver (allocated or cached).
// @param device the device ordinal; -1 means the current device.
// @return reserved_bytes.all.current.
[[nodiscard]] std::size_t memory_reserved(int device = -1);
// torch.cuda.max_memory_reserved: the peak of memory_reserved() since the start or the last
// reset_peak_memory_stats().
// @param device the device ordinal; -1 means the current device.
// @return reserved_bytes.all.peak.
[[nodiscard]] std::size_t max_memory_reserved(int device = -1);
// torch.cuda.reset_peak_memory_stats: every peak becomes its current value.
// @param device the device ordinal; -1 means the current device.
void reset_peak_memory_stats(int device = -1);
// torch.cuda.reset_accumulated_memory_stats: allocation/free totals and event counters go to 0.
// @param device the device ordinal; -1 means the current device.
void reset_accumulated_memory_stats(int device = -1);
// Returns cached, unused memory of every device whose allocator exists to the driver
// (torch.cuda.empty_cache), the pools' included (except pools held by a graph).
//
// Blocks the host: pending frees are waited for, and the device is synchronized
// (cudaDeviceSynchronize) before cached memory is freed (under cudaMallocAsync as well, before
// each device's pool is trimmed). A PluggableAllocator's reset_fn decides for itself.
// @throws StateError under synchronization debug mode "error", when the caching allocator
// synchronizes.
// @throws CudaError when synchronizing or trimming fails (queued work failed).
void empty_cache();
// Limits reserved memory on `device` to fraction * its total memory. Requests that would pass
// the limit fail with OutOfMemoryError (after freeing the cache and retrying).
// @param fraction the share of the device's total memory, in (0, 1].
// @param device the device ordinal; -1 means the current device.
// @throws InvalidArgumentError unless 0 < fraction <= 1, or for an ordinal out of range.
void set_per_process_memory_fraction(double fraction, int device = -1);
// The limit set_per_process_memory_fraction() or CUDAKIT_ALLOC_CONF set (1.0: none).
// @param device the device ordinal; -1 means the current device.
// @return the fraction in (0, 1].
[[nodiscard]] double get_per_process_memory_fraction(int device = -1);
// torch.cuda.memory._set_allocator_settings: changes the settings of every device's allocator
// that exists, and of those created later, with CUDAKIT_ALLOC_CONF's syntax. Only
// AllocatorConfig::kRuntimeKeys may be named (See Note [Settings at run time] in
// allocator_config.cpp); keys not named keep their value.
// @throws InvalidArgumentError naming the key and value, with nothing changed on any device, for
// an unknown key, a key that cannot change at run time or a bad value.
// @param settings "key:value,..." as in CUDAKIT_ALLOC_CONF.
void set_allocator_settings(std::string_view settings);
// Adds `observer` to `device`'s allocator (-1: current): it is called before every
// OutOfMemoryError that allocator throws (torch's _cuda_attach_out_of_memory_observer; see
// OutOfMemoryObserver). Returns an id for CachingAllocator::detach_oom_observer.
// @param observer the function to call; kept until detached.
// @param device the device ordinal; -1 means the current device.
// @return the id for device_allocator(device).detach_oom_observer().
// @throws InvalidArgumentError for an empty function.
// @throws StateError under a backend other than the native caching one (as torch's).
std::uint64_t attach_out_of_memory_observer(OutOfMemoryObserver observer, int device = -1);
// torch.cuda.memory_summary(): a readable table of the statistics.
// @param device the device ordinal; -1 means the current device.
// @return the table, headed by the backend's settings.
[[nodiscard]] std::string memory_summary(int device = -1);

}  // namespace cudakit::memory
