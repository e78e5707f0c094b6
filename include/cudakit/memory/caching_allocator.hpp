#pragma once
// @brief CachingAllocator: the policy engine of cudakit's device allocator — which cached block serves
// which request, when memory is obtained from or returned to its SegmentProvider, stream-ordered
// reuse, statistics and history. It never calls CUDA itself, so the host tier tests it on host
// memory (HostSegmentProvider) exactly as it runs on a GPU (CudaSegmentProvider).
//
// Thread safety: every member may be called from any thread. State is sharded per (pool,
// stream), each shard with its own lock, so threads working on their own streams do not
// contend (See Note [Shards and statistics] in src/memory/detail/shard.hpp); threads that
// contend for one stream's shard get shards of their own for it (AllocatorConfig::thread_shards).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cudakit/memory/allocator_config.hpp"
#include "cudakit/memory/memory_history_options.hpp"
#include "cudakit/memory/memory_stats.hpp"
#include "cudakit/memory/out_of_memory_observer.hpp"
#include "cudakit/memory/pool_id.hpp"
#include "cudakit/memory/pool_options.hpp"
#include "cudakit/memory/segment_observer.hpp"
#include "cudakit/memory/segment_provider.hpp"
#include "cudakit/memory/snapshot.hpp"
#include "cudakit/memory/stream_events.hpp"

namespace cudakit::memory {

// The caching allocator of one device: serves requests from cached blocks split out of segments
// that its SegmentProvider hands out, reuses freed blocks in stream order, and keeps torch's
// statistics, history and snapshots. device_allocator() gives each device's; tests and tools
// build their own over host memory. Not copyable or movable: pools, observers and pointers
// handed out refer to it.
class CachingAllocator {
 public:
  // An allocator with an empty default pool; no memory is obtained until the first request.
  // @param device the device ordinal reported in statistics, snapshots and OOM reports (not
  // checked: the provider decides where memory lives).
  // @param provider supplies the default pool's memory (and that of pools created without one);
  // shared with the caller.
  // @param events tells when streams' work finished (pending frees, cross-stream reuse).
  // @param config the settings (AllocatorConfig::from_environment() for CUDAKIT_ALLOC_CONF's);
  // expandable_segments is turned off when the provider cannot map (page_size() == 0).
  // @throws InvalidArgumentError when `provider` or `events` is null.
  CachingAllocator(int device, std::shared_ptr<SegmentProvider> provider,
                   std::shared_ptr<StreamEvents> events, AllocatorConfig config = {});
  // Returns all cached memory to the providers, waiting for pending frees first. Blocks still
  // allocated are reported (a warning in the log) and leaked; errors while returning memory are
  // logged, never thrown.
  ~CachingAllocator();
  // Not copyable: the allocator owns its segments and its pools.
  CachingAllocator(const CachingAllocator&) = delete;
  // Not copyable: the allocator owns its segments and its pools.
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // Memory for use on `stream`, from `pool`. nullptr for 0 bytes.
  //
  // Stream-ordered on `stream`: the block may be used by work queued on `stream` at once, since
  // any earlier user of it on `stream` runs before. The call may record events (pending frees,
  // cross-stream reuse) and, under cross_stream_reuse:dependencies, make `stream` wait for
  // another stream's event: stream-ordered, the host does not wait. It blocks the host only
  // where it returns cached memory to the provider, which synchronizes first: past
  // garbage_collection_threshold, and when no cached or new memory serves the request (it then
  // waits for pending frees, returns the cache and retries).
  // @param bytes the size requested; the block is rounded up (allocation_size()).
  // @param stream the stream that will use the memory (its cudaStream_t as a StreamKey).
  // @param pool the pool to serve it from; the default pool when omitted.
  // @return the block's address, or nullptr when `bytes` is 0.
  // @throws OutOfMemoryError with a report, after freeing cached memory and retrying (observers
  // attached with attach_oom_observer() are called first).
  // @throws InvalidArgumentError for a pool that does not exist (or was released).
  [[nodiscard]] void* allocate(std::size_t bytes, StreamKey stream, PoolId pool = {});
  // Frees a block from allocate(). Null is ignored.
  //
  // Stream-ordered on the stream the block was allocated on: later allocations on that stream
  // may reuse it at once. When record_stream() named other streams, an event is recorded on each
  // (the host does not wait) and the block is reused only once they have completed (or, while
  // one of them captures a graph, after the capture). Returns without waiting for the device.
  // @param ptr the address allocate() returned.
  // @throws InvalidArgumentError for a pointer that is not a live allocation of this allocator.
  void deallocate(void* ptr);
  // deallocate() for a pointer that may belong to another allocator: false, with nothing done,
  // when it is not this one's (one arena lookup, where owns() + deallocate() take two).
  // Stream ordering as deallocate().
  // @param ptr any address (null gives false).
  // @return true when `ptr` lay in this allocator's memory and was freed.
  [[nodiscard]] bool deallocate_if_owned(void* ptr);
  // The block will not be reused until the work queued on `stream` so far has finished
  // (torch's Tensor.record_stream): at deallocate(), an event is recorded on `stream` and reuse
  // waits for it. Records nothing now and does not block. Naming the allocating stream, or a
  // stream named before, changes nothing.
  // @param ptr a live allocation of this allocator (its start or any address inside it).
  // @param stream a stream that uses the block besides the one it was allocated on.
  // @throws InvalidArgumentError for a pointer that is not a live allocation of this allocator.
  void record_stream(void* ptr, StreamKey stream);
  // Rounded size of a live allocation.
  // @param ptr a live allocation of this allocator.
  // @return the block's size in bytes, at least the size requested.
  // @throws InvalidArgumentError for a pointer that is not a live allocation of this allocator.
  [[nodiscard]] std::size_t allocation_size(const void* ptr) const;
  // True when ptr points into memory this allocator manages (any pool).
  // @param ptr any address.
  // @return whether `ptr` lies in one of this allocator's segments, allocated or cached.
  [[nodiscard]] bool owns(const void* ptr) const noexcept;

  // External holds (See Note [External holds] in caching_allocator.cpp): something outside the
  // allocator, such as another process that opened the block through IPC, still uses it.
  // While a block has holds, deallocate() frees it as the program sees it (allocated bytes
  // fall) but leaves it active and pending, never reused, until the last hold is released;
  // blocks without holds cost nothing extra.
  // Adds one hold to the live allocation that starts at `ptr`.
  // @param ptr the start of a live allocation of this allocator.
  // @throws InvalidArgumentError for a pointer that is not a live allocation of this allocator.
  void add_external_hold(void* ptr);
  // Removes one hold. The last hold of a block already freed completes its free: it becomes
  // reusable at once, or once the work of the streams record_stream() named has finished
  // (events are recorded on them now; the host does not wait).
  // @param ptr the start of a block that add_external_hold() was given.
  // @throws InvalidArgumentError for a pointer that holds no hold.
  void release_external_hold(void* ptr);
  // Holds on the block that starts at `ptr` (freed or not); 0 for any other pointer.
  // @param ptr any address.
  // @return the number of holds not yet released.
  [[nodiscard]] std::size_t external_holds(const void* ptr) const;

  // The memory the provider handed out that backs a live allocation: what must be shared for
  // another process to see it.
  struct Backing {
    // One piece of provider memory: a segment, or one mapped chunk of an expandable range.
    struct Range {
      void* base = nullptr;  // the address the provider returned (allocate_segment or map)
      std::size_t size = 0;  // bytes, as the provider handed them out
    };
    void* block = nullptr;  // the allocation's address
    std::size_t block_size = 0;  // the rounded size (allocation_size)
    bool expandable = false;  // whether the block lies in an expandable range (several chunks)
    // In address order: the one segment that holds the block (allocate_segment), or the
    // chunks of an expandable range (one map() each) that the block overlaps.
    std::vector<Range> ranges;
  };
  // The provider memory behind a live allocation (for IPC export).
  // @param ptr a live allocation of this allocator (its start or any address inside it).
  // @return the block and the segment or chunks it lies in.
  // @throws InvalidArgumentError for a pointer that is not a live allocation of this allocator.
  [[nodiscard]] Backing backing(const void* ptr) const;

  // Waits for every pending free, then returns every wholly free segment (and the free tails of
  // expandable ranges) of every pool to its provider, except pools held (hold_pool).
  //
  // Blocks the host: it waits on the events of pending frees, and the provider synchronizes
  // before memory is returned (CudaSegmentProvider: the whole device, cudaDeviceSynchronize).
  // @throws StateError when the synchronization debug mode is "error" (a synchronizing call).
  void empty_cache();
  // Completes pending frees whose streams' work has finished (does not wait): their blocks become
  // reusable. Queries events only; never blocks on the device.
  void process_events();

  // Pools (torch.cuda.MemPool's and graphs' private pools).
  // A pool id never used before, unique in the process (for create_pool()).
  // @return an id whose `first` is 0 and `second` a process-wide counter.
  [[nodiscard]] static PoolId new_pool_id() noexcept;
  // Creates pool `id`, empty. A pool with a null provider draws from the default provider;
  // `options` as torch.cuda.MemPool's (use_on_oom, no_split).
  // @param id the pool's id (new_pool_id()); the id of a released pool may be reused.
  // @param provider where the pool's memory comes from; the default pool's when null.
  // @param options how the pool serves requests.
  // @throws InvalidArgumentError for an id that exists already.
  void create_pool(PoolId id, std::shared_ptr<SegmentProvider> provider = nullptr, PoolOptions options = {});
  // The pool's cached memory is returned now; it disappears once its last block is freed. Its
  // holds (hold_pool) end. Blocks the host as empty_cache() does, for this pool's memory.
  // @param id a pool made by create_pool().
  // @throws InvalidArgumentError for the default pool, or a pool that does not exist (or was
  // already released).
  void release_pool(PoolId id);
  // A hold on a pool whose free memory is still in use (a graph captured into it reads and
  // writes what the capture freed): empty_cache(), the free-and-retry before an out-of-memory
  // error and the garbage-collection threshold leave the pool's cached memory alone until every
  // hold is released; release_pool still returns it. Holds count.
  // @param id the pool to hold (the default pool too).
  // @throws InvalidArgumentError for a pool that does not exist (or was released).
  void hold_pool(PoolId id);
  // Ends one hold_pool (nothing for a pool without holds, or released: release_pool ends them all).
  // @param id the held pool.
  void release_pool_hold(PoolId id) noexcept;
  // @param id any pool id.
  // @return whether pool `id` exists and was not released.
  [[nodiscard]] bool has_pool(PoolId id) const;
  // Bytes reserved by `id` (all streams).
  // @param id any pool id (0 for one that does not exist).
  // @return the bytes of provider memory the pool holds, allocated or cached.
  [[nodiscard]] std::size_t pool_reserved_bytes(PoolId id) const;
  // Bytes allocated from `id` (all streams).
  // @param id any pool id (0 for one that does not exist).
  // @return the rounded sizes of the pool's live allocations, summed.
  [[nodiscard]] std::size_t pool_allocated_bytes(PoolId id) const;

  // Statistics over all pools and streams, as torch.cuda.memory_stats() gives them: current
  // values, totals and every peak are the device's, exact with any number of streams and
  // threads. With exact_peaks:False (AllocatorConfig) and several streams, peaks other than
  // reserved bytes' are sums of per-stream peaks, upper bounds (See Note [Device-wide peaks] in
  // src/memory/detail/device_peaks.hpp).
  // @return a consistent copy: every pool and stream of this allocator.
  [[nodiscard]] MemoryStats stats() const;
  // Sets every peak to its current value (torch.cuda.reset_peak_memory_stats).
  void reset_peak_stats();
  // Sets the allocated/freed totals and the event counters (device allocations and frees,
  // retries, OOMs, cross-stream reuses, synchronizations) to 0
  // (torch.cuda.reset_accumulated_memory_stats).
  void reset_accumulated_stats();

  // Adds an observer called before every OutOfMemoryError this allocator throws, in the order
  // attached (see OutOfMemoryObserver); the returned id detaches it.
  // @param observer the function to call; kept until detached.
  // @return the id for detach_oom_observer().
  // @throws InvalidArgumentError for an empty function.
  std::uint64_t attach_oom_observer(OutOfMemoryObserver observer);
  // Detaches an observer attach_oom_observer() added.
  // @param id the id attach_oom_observer() returned.
  // @throws InvalidArgumentError for an id that is not attached.
  void detach_oom_observer(std::uint64_t id);

  // Adds an observer of the memory this allocator maps and unmaps (every pool): it is called at
  // once with a `mapped` event for every range that exists (classic segments whole, expandable
  // ranges chunk by chunk), then for every range mapped and before every range unmapped, until
  // detached. Calls hold the allocator's locks: See Note [Segment observers' locks]. A range
  // mapped while this call runs may be reported mapped twice. The returned id detaches it.
  // @param observer the function to call; kept until detached.
  // @return the id for detach_segment_observer().
  // @throws InvalidArgumentError for an empty function.
  std::uint64_t attach_segment_observer(SegmentObserver observer);
  // Detaches an observer attach_segment_observer() added. After it returns the observer is not
  // called again (calls in flight have finished).
  // @param id the id attach_segment_observer() returned.
  // @throws InvalidArgumentError for an id that is not attached.
  void detach_segment_observer(std::uint64_t id);

  // Reserved memory is limited to fraction * total (0 < fraction <= 1): a request that would
  // reserve more fails as if memory were exhausted (freeing the cache and retrying first).
  // @param fraction the share of the provider's total memory (memory_info().second).
  // @throws InvalidArgumentError, with nothing changed, for a fraction outside (0, 1].
  void set_memory_fraction(double fraction);
  // Changes the settings of the running allocator (torch.cuda.memory._set_allocator_settings):
  // "key:value,..." with AllocatorConfig::kRuntimeKeys only (See Note [Settings at run time]
  // in allocator_config.cpp). Keys not named keep their value.
  // @param settings CUDAKIT_ALLOC_CONF's syntax, e.g. "garbage_collection_threshold:0.8".
  // @throws InvalidArgumentError naming the key and value, with nothing changed, for an unknown
  // key, a key that cannot change at run time or a bad value.
  void set_allocator_settings(std::string_view settings);
  // The settings now (a copy: set_allocator_settings may change them meanwhile).
  // @return the configuration in force (expandable_segments false when the provider cannot map).
  [[nodiscard]] AllocatorConfig config() const;
  // @return the device ordinal given at construction.
  [[nodiscard]] int device() const noexcept;
  // @return the default pool's provider (it lives as long as the allocator).
  [[nodiscard]] SegmentProvider& provider() const noexcept;

  // Captures the current call stack for a history entry (the caller's frames, Python's too);
  // may return null for none. Called on the allocating thread, with no allocator lock held.
  using CaptureFrames = std::function<std::shared_ptr<const StackFrames>()>;
  // History (torch's _record_memory_history): what `options` asks for is recorded, with the
  // frames `capture` returns where contexts are kept (capture may be empty: no frames).
  // Turning history off, or options.clear_history, drops the entries recorded so far; otherwise
  // they are kept, the oldest dropped beyond the new max_entries.
  // @param options what to record (MemoryHistoryOptions).
  // @param capture the frame capture; none when empty.
  // @throws InvalidArgumentError, with nothing changed, for an unknown skip_actions name.
  void record_history(const MemoryHistoryOptions& options, CaptureFrames capture = {});
  // Shorthand: torch's defaults (enabled, context "all") with `max_entries`, or off.
  // @param enabled true records everything torch's defaults record; false stops recording.
  // @param max_entries the most trace entries kept (the oldest are dropped).
  // @param capture the frame capture; none when empty.
  void record_history(bool enabled, std::size_t max_entries = 100000, CaptureFrames capture = {});
  // Segments, blocks and statistics; the recorded trace too with `include_traces` (a copy of
  // the whole history, which the segments alone do not need). Pending frees are shown as
  // active_pending_free; the device is not synchronized.
  // @param include_traces whether to copy the history into MemorySnapshot::trace.
  // @return the snapshot, segments in address order.
  [[nodiscard]] MemorySnapshot snapshot(bool include_traces = true) const;
  // The readable table torch.cuda.memory_summary() prints.
  // @return the table, with this allocator's settings in its header.
  [[nodiscard]] std::string summary() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cudakit::memory
