#pragma once
// @brief CachingAllocator: the policy engine of cudakit's device allocator — which cached block serves
// which request, when memory is obtained from or returned to its SegmentProvider, stream-ordered
// reuse, statistics and history. It never calls CUDA itself, so the host tier tests it on host
// memory (HostSegmentProvider) exactly as it runs on a GPU (CudaSegmentProvider).
//
// Thread safety: every member may be called from any thread. State is sharded per (pool,
// stream), each shard with its own lock, so threads working on their own streams do not
// contend (See Note [Shards and statistics] in src/memory/detail/shard.hpp).

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

class CachingAllocator {
 public:
  // `provider` supplies the default pool's memory; `events` tells when streams' work finished.
  CachingAllocator(int device, std::shared_ptr<SegmentProvider> provider,
                   std::shared_ptr<StreamEvents> events, AllocatorConfig config = {});
  // Returns all cached memory to the providers. Blocks still allocated are reported and leaked.
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // Memory for use on `stream`, from `pool`. nullptr for 0 bytes.
  // @throws OutOfMemoryError with a report, after freeing cached memory and retrying.
  // @throws InvalidArgumentError for a pool that does not exist (or was released).
  [[nodiscard]] void* allocate(std::size_t bytes, StreamKey stream, PoolId pool = {});
  // @throws InvalidArgumentError for a pointer that is not a live allocation of this allocator.
  void deallocate(void* ptr);
  // deallocate() for a pointer that may belong to another allocator: false, with nothing done,
  // when it is not this one's (one arena lookup, where owns() + deallocate() take two).
  [[nodiscard]] bool deallocate_if_owned(void* ptr);
  // The block will not be reused until the work queued on `stream` so far has finished.
  void record_stream(void* ptr, StreamKey stream);
  // Rounded size of a live allocation. @throws InvalidArgumentError as deallocate.
  [[nodiscard]] std::size_t allocation_size(const void* ptr) const;
  // True when ptr points into memory this allocator manages (any pool).
  [[nodiscard]] bool owns(const void* ptr) const noexcept;

  // External holds (See Note [External holds] in caching_allocator.cpp): something outside the
  // allocator, such as another process that opened the block through IPC, still uses it.
  // While a block has holds, deallocate() frees it as the program sees it (allocated bytes
  // fall) but leaves it active and pending, never reused, until the last hold is released;
  // blocks without holds cost nothing extra.
  // Adds one hold to the live allocation that starts at `ptr`.
  // @throws InvalidArgumentError for a pointer that is not a live allocation of this allocator.
  void add_external_hold(void* ptr);
  // Removes one hold. The last hold of a block already freed completes its free: it becomes
  // reusable at once, or once the work of the streams record_stream() named has finished.
  // @throws InvalidArgumentError for a pointer that holds no hold.
  void release_external_hold(void* ptr);
  // Holds on the block that starts at `ptr` (freed or not); 0 for any other pointer.
  [[nodiscard]] std::size_t external_holds(const void* ptr) const;

  // The memory the provider handed out that backs a live allocation: what must be shared for
  // another process to see it.
  struct Backing {
    struct Range {
      void* base = nullptr;
      std::size_t size = 0;
    };
    void* block = nullptr;
    std::size_t block_size = 0;  // the rounded size (allocation_size)
    bool expandable = false;
    // In address order: the one segment that holds the block (allocate_segment), or the
    // chunks of an expandable range (one map() each) that the block overlaps.
    std::vector<Range> ranges;
  };
  // @throws InvalidArgumentError as allocation_size.
  [[nodiscard]] Backing backing(const void* ptr) const;

  // Waits for every pending free, then returns every wholly free segment (and the free tails of
  // expandable ranges) of every pool to its provider, except pools held (hold_pool).
  void empty_cache();
  // Completes pending frees whose streams' work has finished (does not wait).
  void process_events();

  // Pools. A pool with a null provider draws from the default provider; `options` as
  // torch.cuda.MemPool's (use_on_oom, no_split).
  // @throws InvalidArgumentError for an id that exists already.
  [[nodiscard]] static PoolId new_pool_id() noexcept;
  void create_pool(PoolId id, std::shared_ptr<SegmentProvider> provider = nullptr, PoolOptions options = {});
  // The pool's cached memory is returned now; it disappears once its last block is freed.
  void release_pool(PoolId id);
  // A hold on a pool whose free memory is still in use (a graph captured into it reads and
  // writes what the capture freed): empty_cache(), the free-and-retry before an out-of-memory
  // error and the garbage-collection threshold leave the pool's cached memory alone until every
  // hold is released; release_pool still returns it. Holds count.
  // @throws InvalidArgumentError for a pool that does not exist (or was released).
  void hold_pool(PoolId id);
  // Ends one hold_pool (nothing for a pool without holds, or released: release_pool ends them all).
  void release_pool_hold(PoolId id) noexcept;
  [[nodiscard]] bool has_pool(PoolId id) const;
  // Bytes reserved by `id` (all streams).
  [[nodiscard]] std::size_t pool_reserved_bytes(PoolId id) const;
  [[nodiscard]] std::size_t pool_allocated_bytes(PoolId id) const;

  // Statistics over all pools and streams, as torch.cuda.memory_stats() gives them: current
  // values, totals and every peak are the device's, exact with any number of streams and
  // threads. With exact_peaks:False (AllocatorConfig) and several streams, peaks other than
  // reserved bytes' are sums of per-stream peaks, upper bounds (See Note [Device-wide peaks] in
  // src/memory/detail/device_peaks.hpp).
  [[nodiscard]] MemoryStats stats() const;
  void reset_peak_stats();
  void reset_accumulated_stats();

  // Adds an observer called before every OutOfMemoryError this allocator throws, in the order
  // attached (see OutOfMemoryObserver); the returned id detaches it.
  // @throws InvalidArgumentError for an empty function.
  std::uint64_t attach_oom_observer(OutOfMemoryObserver observer);
  // @throws InvalidArgumentError for an id that is not attached.
  void detach_oom_observer(std::uint64_t id);

  // Adds an observer of the memory this allocator maps and unmaps (every pool): it is called at
  // once with a `mapped` event for every range that exists (classic segments whole, expandable
  // ranges chunk by chunk), then for every range mapped and before every range unmapped, until
  // detached. Calls hold the allocator's locks: See Note [Segment observers' locks]. A range
  // mapped while this call runs may be reported mapped twice. The returned id detaches it.
  // @throws InvalidArgumentError for an empty function.
  std::uint64_t attach_segment_observer(SegmentObserver observer);
  // After it returns the observer is not called again (calls in flight have finished).
  // @throws InvalidArgumentError for an id that is not attached.
  void detach_segment_observer(std::uint64_t id);

  // Reserved memory is limited to fraction * total (0 < fraction <= 1).
  // @throws InvalidArgumentError, with nothing changed, for a fraction outside (0, 1].
  void set_memory_fraction(double fraction);
  // Changes the settings of the running allocator (torch.cuda.memory._set_allocator_settings):
  // "key:value,..." with AllocatorConfig::kRuntimeKeys only (See Note [Settings at run time]
  // in allocator_config.cpp). Keys not named keep their value.
  // @throws InvalidArgumentError naming the key and value, with nothing changed, for an unknown
  // key, a key that cannot change at run time or a bad value.
  void set_allocator_settings(std::string_view settings);
  // The settings now (a copy: set_allocator_settings may change them meanwhile).
  [[nodiscard]] AllocatorConfig config() const;
  [[nodiscard]] int device() const noexcept;
  [[nodiscard]] SegmentProvider& provider() const noexcept;

  // History (torch's _record_memory_history): what `options` asks for is recorded, with the
  // frames `capture` returns where contexts are kept (capture may be empty: no frames).
  // @throws InvalidArgumentError, with nothing changed, for an unknown skip_actions name.
  using CaptureFrames = std::function<std::shared_ptr<const StackFrames>()>;
  void record_history(const MemoryHistoryOptions& options, CaptureFrames capture = {});
  // Shorthand: torch's defaults (enabled, context "all") with `max_entries`, or off.
  void record_history(bool enabled, std::size_t max_entries = 100000, CaptureFrames capture = {});
  // Segments, blocks and statistics; the recorded trace too with `include_traces` (a copy of
  // the whole history, which the segments alone do not need).
  [[nodiscard]] MemorySnapshot snapshot(bool include_traces = true) const;
  // The readable table torch.cuda.memory_summary() prints.
  [[nodiscard]] std::string summary() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cudakit::memory
