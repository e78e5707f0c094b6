#pragma once
// @brief PinnedHostAllocator: a caching allocator of pinned (page-locked) host memory, the C++ form of
// torch's CachingHostAllocator (the memory of `torch.empty(..., pin_memory=True)`).
//
// Pinned memory is what makes cudaMemcpyAsync between host and device truly asynchronous and
// fast, but cudaHostAlloc is slow (it maps and locks pages) and cudaFreeHost synchronizes the
// device. So freed blocks are cached and reused, and a block is reused only once the GPU work
// that may still read or write it has finished. See Note [Pinned block reuse].
//
// Stream ordering: the allocator does not know which streams use a block. Work that uses it
// asynchronously (a cudaMemcpyAsync on stream S, ...) must be announced with record_stream(ptr,
// S) before deallocate(ptr); otherwise the block is reusable at once, while the copy may still
// be reading it. (torch's Tensor.copy_(non_blocking=True) does this record for its callers.)

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "cudakit/core/stream_ref.hpp"
#include "cudakit/memory/host/pinned_event_source.hpp"
#include "cudakit/memory/host/pinned_host_stats.hpp"
#include "cudakit/memory/host/pinned_memory_provider.hpp"

namespace cudakit::memory {

// Note [Pinned block reuse]
// deallocate(ptr) records one event on each stream that record_stream() named for the block
// (events come from a per-device pool and are re-recorded, never made per deallocation). A block
// with no such stream goes straight back to the cache; otherwise it waits in a pending list
// until all its events have completed. The pending list is polled (cudaEventQuery, never
// blocking) at every allocate() and by process_events(), and a block whose events have all
// completed moves to the cache of its size class. Polling scans every pending block rather than
// stopping at the first incomplete one, as torch does: blocks used on different streams finish
// out of order, and the list is short (one entry per in-flight buffer).
//
// Sizes are rounded up to a power of two (at least kMinBlockSize), and a request is served only
// by a cached block of exactly its size class: a block is never split, so a cached block cannot
// be fragmented, at the price of up to 2x the requested memory (torch's policy too).

// A caching allocator of pinned host memory (torch's CachingHostAllocator); see the file's
// description for stream ordering and Note [Pinned block reuse] for the policy. Thread-safe:
// every member may be called from any thread (one mutex, never held across a provider call).
class PinnedHostAllocator {
 public:
  static constexpr std::size_t kMinBlockSize = 512;  // the smallest size class, in bytes

  // Memory from cudaHostAlloc, events from CUDA. Nothing touches the CUDA runtime until the first
  // allocate() or deallocate() that needs it. CUDAKIT_ALLOC_CONF's pinned_use_cuda_host_register
  // and pinned_num_register_threads choose registered mmap'd memory instead.
  // @throws InvalidArgumentError for a malformed CUDAKIT_ALLOC_CONF.
  PinnedHostAllocator();
  // Custom memory and events (tests use malloc and hand-completed events). Both must be non-null.
  // @param provider where blocks come from; owned by the allocator.
  // @param events the events deallocate() records; owned by the allocator.
  // @throws InvalidArgumentError for a null provider or event source.
  PinnedHostAllocator(std::unique_ptr<PinnedMemoryProvider> provider,
                      std::unique_ptr<PinnedEventSource> events);
  // Waits for the events of pending blocks, then frees all memory the allocator holds, blocks
  // still allocated included: pointers from allocate() are invalid afterwards. Never throws.
  ~PinnedHostAllocator();
  // Not copyable: the allocator owns its blocks.
  PinnedHostAllocator(const PinnedHostAllocator&) = delete;
  // Not copyable: the allocator owns its blocks.
  PinnedHostAllocator& operator=(const PinnedHostAllocator&) = delete;

  // The size class that serves a request of `bytes`: the next power of two, at least
  // kMinBlockSize.
  // @param bytes the size requested.
  // @return the size class in bytes.
  // @throws OutOfMemoryError when no power of two that large fits in size_t.
  [[nodiscard]] static std::size_t size_class(std::size_t bytes);

  // At least `bytes` of pinned host memory, usable by the host at once; nullptr for 0 bytes.
  // Polls the pending blocks first (See Note [Pinned block reuse]). Takes no stream and enqueues
  // nothing; a new block costs a provider call (cudaHostAlloc), which may take milliseconds.
  // @param bytes the size requested; the block is size_class(bytes) long.
  // @return the block's address, or nullptr when `bytes` is 0.
  // @throws OutOfMemoryError, naming the requested and the cached bytes, when the provider fails
  // even after the cache has been freed and the request retried once.
  // @throws CudaError when an event query or the provider fails otherwise.
  [[nodiscard]] void* allocate(std::size_t bytes);
  // Returns memory from allocate(); null is ignored. The block becomes reusable once the work
  // queued so far on every stream named by record_stream() has finished.
  //
  // Records one event on each such stream (stream-ordered, the host does not wait) and returns;
  // without such streams the block is reusable at once.
  // @param ptr the start of a block from allocate().
  // @throws InvalidArgumentError for a pointer that is not the start of a block allocated here
  // (unknown, inside a block, or already deallocated).
  // @throws CudaError when recording an event fails, in which case the block stays allocated
  // and may be deallocated again.
  void deallocate(void* ptr);
  // Marks the block holding `ptr` (any address inside it) as used by `stream`, so that its
  // deallocation waits for the work queued on `stream` up to the deallocation. Records nothing
  // now; does not block.
  // @param ptr an address inside a block allocated here.
  // @param stream a stream whose queued work uses the block.
  // @throws InvalidArgumentError for a pointer that lies in no block allocated here.
  void record_stream(void* ptr, StreamRef stream);
  // Moves pending blocks whose events have all completed to the cache. Never blocks.
  // @return the number of blocks moved.
  // @throws CudaError when an event query fails.
  std::size_t process_events();
  // Frees every cached block (cudaFreeHost, which synchronizes the device), after polling the
  // pending ones; pending and allocated blocks stay.
  void empty_cache();
  // True when `ptr` lies inside a block that is allocated here (handed out, not yet deallocated).
  // @param ptr any address.
  // @return whether it lies in an allocated block.
  [[nodiscard]] bool owns(const void* ptr) const;

  // @return a copy of the statistics.
  [[nodiscard]] PinnedHostStats stats() const;
  // Sets each peak to its current value.
  void reset_peak_stats();
  // Zeroes the counters and durations (torch's reset_accumulated_host_memory_stats); what is
  // held now (bytes, blocks, the event pool's size) stays.
  void reset_accumulated_stats();

 private:
  enum class BlockState : std::uint8_t { allocated, pending, cached };
  struct PendingEvent {
    PinnedEventHandle handle;
    int device;
  };
  struct Block {
    void* ptr = nullptr;
    std::size_t size = 0;
    BlockState state = BlockState::allocated;
    std::vector<StreamRef> streams;     // while allocated: from record_stream()
    std::vector<PendingEvent> events;   // while pending: not yet seen complete
  };
  static constexpr std::size_t kNumSizeClasses = 64;

  Block* find_block_containing(const void* ptr) const;
  void* take_cached(std::size_t size);
  void make_allocated(Block& block);
  std::size_t process_events_locked();
  void release_event(const PendingEvent& event);
  // Removes every cached block from the books and returns them, to be freed without the lock.
  std::vector<Block> detach_cached();
  void free_blocks(const std::vector<Block>& blocks) noexcept;
  void* insert_new_block(void* ptr, std::size_t size, double provider_us);

  std::unique_ptr<PinnedMemoryProvider> provider_;
  std::unique_ptr<PinnedEventSource> events_;

  // One mutex guards all the state below: pinned allocation is not a hot path (a handful of
  // staging buffers per step), and it is never held across a provider call, because
  // cudaHostAlloc and cudaFreeHost take milliseconds.
  mutable std::mutex mutex_;
  std::map<std::uintptr_t, std::unique_ptr<Block>> blocks_;  // by address, for interior lookups
  std::array<std::vector<Block*>, kNumSizeClasses> cached_;   // by log2(size); used as stacks
  std::vector<Block*> pending_;
  std::unordered_map<int, std::vector<PinnedEventHandle>> event_pool_;  // idle events by device
  PinnedHostStats stats_;
};

// The process-wide instance, made on first use and never destroyed: it may be used until the
// very end of the process, after the CUDA runtime has begun unloading.
// @return the instance, configured from CUDAKIT_ALLOC_CONF when made.
// @throws InvalidArgumentError (at the first call) for a malformed CUDAKIT_ALLOC_CONF.
[[nodiscard]] PinnedHostAllocator& pinned_host_allocator();

// Forward to pinned_host_allocator(); see PinnedHostAllocator for the contracts.
// PinnedHostAllocator::allocate() of the process-wide instance.
// @param bytes the size requested.
// @return the block, or nullptr for 0 bytes.
// @throws OutOfMemoryError as PinnedHostAllocator::allocate().
[[nodiscard]] void* allocate_pinned(std::size_t bytes);
// PinnedHostAllocator::deallocate() of the process-wide instance.
// @param ptr the start of a block from allocate_pinned(); null is ignored.
// @throws InvalidArgumentError as PinnedHostAllocator::deallocate().
void deallocate_pinned(void* ptr);
// PinnedHostAllocator::record_stream() of the process-wide instance.
// @param ptr an address inside a block from allocate_pinned().
// @param stream a stream whose queued work uses the block.
// @throws InvalidArgumentError as PinnedHostAllocator::record_stream().
void record_stream_pinned(void* ptr, StreamRef stream);

}  // namespace cudakit::memory
