#pragma once
// @brief TorchCachingModel: a host model of PyTorch's CUDACachingAllocator policy (c10/cuda), for
// what-if replays of recorded traces: which block serves each request, when segments are
// obtained and returned, what torch.cuda.max_memory_reserved() / max_memory_allocated() would
// read. No memory is touched: addresses are numbers. See Note [A model of torch's allocator] in
// src/memory/torch_caching_model.cpp for what it follows and what it leaves out.

#include <cstddef>
#include <cstdint>
#include <set>
#include <vector>

#include "cudakit/memory/allocator_config.hpp"

namespace cudakit::memory {

// The model of one device's torch allocator. Single-threaded; streams are dense indices and
// nothing runs on a device: "stream ordering" is the order of the calls.
class TorchCachingModel {
 public:
  // A block's index in the model (reused after the block is merged away).
  using BlockId = std::uint32_t;
  static constexpr BlockId kNoBlock = ~BlockId{0};  // allocate()'s answer where torch would fail

  // `config`: torch's keys (expandable_segments, max_split_size_mb, max_non_split_rounding_mb,
  // large_segment_size_mb, roundup_power2_divisions, garbage_collection_threshold,
  // per_process_memory_fraction); cudakit's own keys are ignored. `device_memory`: the device's
  // total memory, which the memory fraction, the garbage-collection threshold and expandable
  // segments' address ranges are taken of. `capacity`: the memory that can be obtained at all
  // (cudaMalloc and cuMemCreate fail beyond it).
  // @param config torch's settings.
  // @param device_memory the device's total memory, in bytes.
  // @param capacity the memory that can be obtained, in bytes.
  TorchCachingModel(const AllocatorConfig& config, std::size_t device_memory, std::size_t capacity);

  // torch's malloc on `stream` (any dense index): kNoBlock where torch would raise
  // OutOfMemoryError, after releasing what it can and retrying as torch does.
  // @param bytes the size requested.
  // @param stream the requesting stream's dense index.
  // @return the block, or kNoBlock.
  // @throws InvalidArgumentError when the trace asks for more address space over its run than
  // the model can number.
  BlockId allocate(std::size_t bytes, std::uint32_t stream);
  // torch's free. With `deferred`, the block stays unusable until complete_free(the returned
  // ticket) (record_stream's events), while allocated bytes drop at once, as in torch; a release
  // of the cache (out of memory, empty_cache) waits for every such free first, after which its
  // complete_free does nothing.
  using PendingFree = std::uint64_t;
  // Frees `block` (see above).
  // @param block a block allocate() returned, still allocated.
  // @param deferred whether the free waits for complete_free().
  // @return the ticket for complete_free() when deferred; 0 otherwise.
  PendingFree free(BlockId block, bool deferred = false);
  // Completes a deferred free: the block becomes reusable. A ticket that is 0, unknown, or
  // already completed (by a release of the cache) is ignored.
  // @param ticket what free() returned.
  void complete_free(PendingFree ticket);
  // torch.cuda.empty_cache(): every cached block that can be returned, returned.
  void empty_cache();

  // The rounded size of a block.
  // @param block a block of the model.
  // @return its size in bytes.
  // @throws std::out_of_range for an id the model never made.
  [[nodiscard]] std::size_t block_size(BlockId block) const { return blocks_.at(block).size; }
  // The modelled address of a block (a number; no memory is behind it).
  // @param block a block of the model.
  // @return its address.
  // @throws std::out_of_range for an id the model never made.
  [[nodiscard]] std::uint64_t address(BlockId block) const { return blocks_.at(block).addr; }
  // @return reserved bytes now (torch.cuda.memory_reserved()).
  [[nodiscard]] std::uint64_t reserved() const noexcept { return reserved_; }
  // @return the peak of reserved() (torch.cuda.max_memory_reserved()).
  [[nodiscard]] std::uint64_t peak_reserved() const noexcept { return peak_reserved_; }
  // @return allocated bytes now (torch.cuda.memory_allocated()).
  [[nodiscard]] std::uint64_t allocated() const noexcept { return allocated_; }
  // @return the peak of allocated() (torch.cuda.max_memory_allocated()).
  [[nodiscard]] std::uint64_t peak_allocated() const noexcept { return peak_allocated_; }
  // cudaMalloc and map calls, as torch's num_device_alloc counts them.
  // @return the count.
  [[nodiscard]] std::size_t device_allocations() const noexcept { return device_allocs_; }
  // Allocations that needed the cache released and a retry (torch's num_alloc_retries).
  // @return the count.
  [[nodiscard]] std::size_t retries() const noexcept { return retries_; }
  // The block sizes, in address order, of the segment holding `block` (for tests).
  // @param block a block of the model.
  // @return the sizes of every block of its segment.
  [[nodiscard]] std::vector<std::size_t> segment_of(BlockId block) const;

  // torch's round_size.
  // @param bytes the size requested.
  // @return the size torch's allocator would serve (roundup_power2_divisions applied).
  [[nodiscard]] std::size_t round_size(std::size_t bytes) const;

 private:
  struct Block {
    std::uint64_t addr = 0;
    std::uint64_t size = 0;
    std::uint32_t stream = 0;
    BlockId prev = kNoBlock, next = kNoBlock;
    std::uint32_t segment = ~0u;  // expandable segment index, or ~0u for a cudaMalloc segment
    bool small = false;
    bool allocated = false;
    bool pending = false;  // freed, waiting for other streams (torch's event_count > 0)
    bool mapped = true;
    std::uint32_t generation = 0;  // counts the uses of this slot of blocks_
    std::uint64_t gc_base = 0;
  };
  // torch's BlockPool: free blocks by (stream, size, address); unmapped ranges by (stream, address).
  struct Key {
    std::uint32_t stream;
    std::uint64_t size;
    std::uint64_t addr;
    BlockId id;
    bool operator<(const Key& o) const {
      if (stream != o.stream) return stream < o.stream;
      if (size != o.size) return size < o.size;
      return addr < o.addr;
    }
  };
  struct Pool {
    bool small = false;
    std::set<Key> blocks;
    std::set<Key> unmapped;  // size 0 in the key: ordered by address
    std::uint64_t get_free_calls = 0;
  };
  struct Segment {  // an expandable segment: a range of address space mapped in pages
    std::uint64_t base = 0;
    std::uint64_t page = 0;
    std::uint64_t pages = 0;
  };

  Block& b(BlockId id) { return blocks_[id]; }
  const Block& b(BlockId id) const { return blocks_[id]; }
  BlockId new_block(const Block& init);
  void delete_block(BlockId id);
  // A new block from `part`, linked just before / after `id` in its segment.
  BlockId link_before(BlockId id, Block part);
  BlockId link_after(BlockId id, Block part);
  Pool& pool_of(const Block& block) { return block.small ? small_ : large_; }
  Key key(BlockId id) const;
  Key unmapped_key(BlockId id) const;
  void insert_free(BlockId id);
  void erase_free(BlockId id);
  void count_reserved(std::int64_t change);

  BlockId get_free_block(Pool& pool, std::uint32_t stream, std::size_t size, bool expandable);
  bool alloc_block(Pool& pool, std::uint32_t stream, std::size_t size, std::size_t alloc_size,
                   bool expandable, BlockId& out);
  bool can_obtain(std::size_t bytes) const;
  BlockId alloc_found_block(BlockId id, std::size_t size, bool split);
  bool should_split(const Block& block, std::size_t size, bool expandable) const;
  std::size_t allocation_size(std::size_t size) const;
  void free_block(BlockId id);
  std::uint64_t try_merge(BlockId dst, BlockId src);
  void garbage_collect();
  bool release_available_cached_blocks(Pool& pool, std::uint32_t stream, std::size_t size);
  void release_cached_blocks();
  void release_blocks(Pool& pool);
  void release_block(BlockId id);
  void unmap_block(BlockId id);
  void release_expandable_segment(BlockId id);
  BlockId find_expandable_block(Pool& pool, std::uint32_t stream, std::size_t size);
  bool map_block(BlockId id, std::size_t size);
  BlockId try_allocate_expandable_block(Pool& pool, std::uint32_t stream, std::size_t size);
  std::uint64_t next_address(std::uint64_t bytes, std::uint64_t align);

  AllocatorConfig config_;
  std::size_t device_memory_;
  std::size_t capacity_;
  std::uint64_t allowed_ = ~std::uint64_t{0};  // torch's allowed_memory_maximum, when a fraction is set
  bool gc_active_ = false;
  std::vector<Block> blocks_;
  std::vector<BlockId> free_ids_;
  std::set<BlockId> pending_;
  std::vector<Segment> segments_;
  Pool small_, large_;
  std::uint64_t next_va_ = std::uint64_t{1} << 62;  // See next_address()
  std::uint64_t reserved_ = 0, peak_reserved_ = 0, allocated_ = 0, peak_allocated_ = 0;
  std::size_t device_allocs_ = 0, retries_ = 0;
};

}  // namespace cudakit::memory
