#include "cudakit/memory/torch_caching_model.hpp"

#include <algorithm>
#include <bit>
#include <limits>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/error.hpp"

namespace cudakit::memory {

// Note [A model of torch's allocator]
// What-if replays need torch's own answer to "how much would this program reserve": a model of
// DeviceCachingAllocator (c10/cuda/CUDACachingAllocator.cpp) step by step. cudakit's
// CachingAllocator comes close in one configuration: with expandable_segments:False and
// cross_stream_reuse:off it follows torch's segment sizes and split rules, and it reproduces
// torch's reserved peaks on the snapshots of tests/data/memory/torch-snapshots. It is still not
// torch, and cannot stand for it: its free index is best fit within ~3% (size-class bins, Note
// [Free-block index]) where torch takes the exact smallest block, then the lowest address; it
// reuses the block freed last before searching (Note [Recently freed blocks]); its garbage
// collection releases whole shards rather than torch's oldest blocks; its policy keeps changing
// for speed; and its expandable arenas are another mechanism than torch's expandable segments
// (2 MiB pages grown ahead of demand, against torch's 20 MiB pages for large blocks: 480 against
// 536 MiB on serve-expandable, lending off). So the torch rows come from this model, written from
// torch's policy:
//  - requests are rounded to 512 bytes (roundup_power2_divisions may round further); requests
//    up to 1 MiB come from the small pool, in 2 MiB segments; larger ones from the large pool,
//    in large_segment_size (20 MiB) segments under 10 MiB, else in segments of their own size
//    rounded to 2 MiB;
//  - a request takes the smallest free block of its stream and pool (then the lowest address);
//    max_split_size keeps blocks at or above it whole and away from smaller requests, and lets
//    a request at or above it take one only within max_non_split_rounding (20 MiB) of its size;
//    a block is split when the rest is at least 512 bytes (small pool, expandable segments) or
//    more than 1 MiB (large pool); freed blocks merge with free neighbours;
//  - when no block fits: garbage collection (garbage_collection_threshold, which torch applies
//    only under a per-process memory fraction) releases whole cached large blocks, oldest
//    first; then a new segment; failing that (the fraction, or the device full), the oversize
//    cached blocks of the stream (with max_split_size) and then every whole cached segment are
//    released, and the allocation retried once before out of memory;
//  - expandable_segments:True: one address range per stream and pool, 1 1/8 of the device's
//    memory, mapped in pages (2 MiB for the small pool, large_segment_size for the large one)
//    at the lowest address with room, free blocks counted with the unmapped space after them
//    when choosing; releasing the cache unmaps the whole pages of free blocks;
//  - frees that record_stream made wait keep their block until they complete; a release of the
//    cache waits for them all first.
// Left out: CUDA graphs' private pools (a snapshot's trace does not say which pool an entry
// used), the free-memory callbacks, and the driver's own rounding and reservations (reserved
// bytes count what torch asked for, as torch's statistics do).
namespace {

constexpr std::size_t kMinBlockSize = 512;
constexpr std::size_t kSmallSize = std::size_t{1} << 20;
constexpr std::size_t kSmallBuffer = std::size_t{2} << 20;
constexpr std::size_t kMinLargeAlloc = std::size_t{10} << 20;
constexpr std::size_t kRoundLarge = std::size_t{2} << 20;
constexpr std::size_t kUnlimited = std::numeric_limits<std::size_t>::max();

std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

// torch's roundup_power2_next_division: one of `divisions` equal steps between the powers of two
// around `size`.
std::size_t next_division(std::size_t size, std::size_t divisions) {
  if (size <= 4 || divisions <= 1 || std::has_single_bit(size)) return size;
  const std::size_t floor = std::bit_floor(size);
  const std::size_t step = floor >> (std::bit_width(divisions) - 1);
  if (step == 0) return floor << 1;
  const std::size_t down = size & ~(step - 1);
  return down == size ? size : down + step;
}

}  // namespace

TorchCachingModel::TorchCachingModel(const AllocatorConfig& config, std::size_t device_memory, std::size_t capacity)
    : config_(config), device_memory_(device_memory), capacity_(capacity) {
  if (config_.per_process_memory_fraction < 1.0) {
    allowed_ = static_cast<std::uint64_t>(config_.per_process_memory_fraction * static_cast<double>(device_memory));
    gc_active_ = config_.garbage_collection_threshold > 0.0;
  }
  small_.small = true;
}

std::size_t TorchCachingModel::round_size(std::size_t bytes) const {
  if (bytes < kMinBlockSize) return kMinBlockSize;
  const std::size_t divisions = config_.roundup_divisions(bytes);
  if (divisions > 1 && bytes > kMinBlockSize * divisions) return next_division(bytes, divisions);
  return round_up(bytes, kMinBlockSize);
}

std::size_t TorchCachingModel::allocation_size(std::size_t size) const {
  if (size <= kSmallSize) return kSmallBuffer;
  if (size < kMinLargeAlloc) return config_.large_segment_size;
  return round_up(size, kRoundLarge);
}

bool TorchCachingModel::should_split(const Block& block, std::size_t size, bool expandable) const {
  const std::size_t remaining = block.size - size;
  if (block.small || expandable) return remaining >= kMinBlockSize;
  return size < config_.max_split_size && remaining > kSmallSize;
}

// ---- blocks and their sets ----

TorchCachingModel::BlockId TorchCachingModel::new_block(const Block& init) {
  BlockId id;
  if (!free_ids_.empty()) {
    id = free_ids_.back();
    free_ids_.pop_back();
  } else {
    id = static_cast<BlockId>(blocks_.size());
    blocks_.emplace_back();
  }
  const std::uint32_t generation = blocks_[id].generation + 1;
  blocks_[id] = init;
  blocks_[id].generation = generation;
  return id;
}

void TorchCachingModel::delete_block(BlockId id) { free_ids_.push_back(id); }

TorchCachingModel::BlockId TorchCachingModel::link_before(BlockId id, Block part) {
  part.prev = b(id).prev;
  part.next = id;
  const BlockId p = new_block(part);
  if (b(p).prev != kNoBlock) b(b(p).prev).next = p;
  b(id).prev = p;
  return p;
}

TorchCachingModel::BlockId TorchCachingModel::link_after(BlockId id, Block part) {
  part.prev = id;
  part.next = b(id).next;
  const BlockId n = new_block(part);
  if (b(n).next != kNoBlock) b(b(n).next).prev = n;
  b(id).next = n;
  return n;
}

TorchCachingModel::Key TorchCachingModel::key(BlockId id) const {
  const Block& x = b(id);
  return Key{x.stream, x.size, x.addr, id};
}
TorchCachingModel::Key TorchCachingModel::unmapped_key(BlockId id) const {
  const Block& x = b(id);
  return Key{x.stream, 0, x.addr, id};
}

void TorchCachingModel::insert_free(BlockId id) {
  Pool& pool = pool_of(b(id));
  b(id).gc_base = pool.get_free_calls;
  pool.blocks.insert(key(id));
}
void TorchCachingModel::erase_free(BlockId id) { pool_of(b(id)).blocks.erase(key(id)); }

void TorchCachingModel::count_reserved(std::int64_t change) {
  reserved_ = static_cast<std::uint64_t>(static_cast<std::int64_t>(reserved_) + change);
  peak_reserved_ = std::max(peak_reserved_, reserved_);
}

// New ranges come from the top down, as cudaMalloc mostly hands them out (the segments of the
// snapshots in tests/data/memory/torch-snapshots: 39 of 58 steps go down): the address breaks ties
// between free blocks of one size, and with it the model's allocated peak matches torch's to the
// byte on those snapshots, where rising addresses missed train-default's by 0.07%.
std::uint64_t TorchCachingModel::next_address(std::uint64_t bytes, std::uint64_t align) {
  if (bytes > next_va_ - align) {
    throw InvalidArgumentError("TorchCachingModel",
                               "the replay has used up 62 bits of address space: the trace asks "
                               "for more memory over its run than a model can number");
  }
  next_va_ = (next_va_ - bytes) / align * align;
  return next_va_;
}

std::vector<std::size_t> TorchCachingModel::segment_of(BlockId block) const {
  BlockId head = block;
  while (b(head).prev != kNoBlock) head = b(head).prev;
  std::vector<std::size_t> sizes;
  for (BlockId x = head; x != kNoBlock; x = b(x).next) sizes.push_back(b(x).size);
  return sizes;
}

// ---- allocation ----

TorchCachingModel::BlockId TorchCachingModel::allocate(std::size_t bytes, std::uint32_t stream) {
  const std::size_t size = round_size(bytes);
  Pool& pool = size <= kSmallSize ? small_ : large_;
  const std::size_t alloc_size = allocation_size(size);
  const bool expandable = config_.expandable_segments;
  BlockId block = get_free_block(pool, stream, size, expandable);
  if (block == kNoBlock) {
    if (gc_active_) garbage_collect();
    bool found = alloc_block(pool, stream, size, alloc_size, expandable, block);
    if (!found && release_available_cached_blocks(pool, stream, size)) {
      found = alloc_block(pool, stream, size, alloc_size, expandable, block);
    }
    if (!found) {
      release_cached_blocks();
      ++retries_;
      found = alloc_block(pool, stream, size, alloc_size, expandable, block);
    }
    if (!found) return kNoBlock;
  }
  return alloc_found_block(block, size, should_split(b(block), size, expandable));
}

TorchCachingModel::BlockId TorchCachingModel::get_free_block(Pool& pool, std::uint32_t stream, std::size_t size,
                                                             bool expandable) {
  if (gc_active_) ++pool.get_free_calls;
  auto it = pool.blocks.lower_bound(Key{stream, size, 0, 0});
  if (it == pool.blocks.end() || it->stream != stream) return kNoBlock;
  const auto in_segment = [&](auto at) { return b(at->id).segment != ~0u; };
  if (in_segment(it)) {
    if (expandable) {
      // A free block with unmapped space after it counts as the size it can grow to.
      const auto growable = [&](auto at) {
        const Block& x = b(at->id);
        return x.size + (x.next != kNoBlock && !b(x.next).mapped ? b(x.next).size : 0);
      };
      auto next = std::next(it);
      while (in_segment(it) && next != pool.blocks.end() && next->stream == stream && growable(next) < growable(it)) {
        it = next++;
      }
    } else {
      do {
        ++it;
      } while (it != pool.blocks.end() && in_segment(it) && it->stream == stream);
      if (it == pool.blocks.end() || it->stream != stream) return kNoBlock;
    }
  }
  if (size < config_.max_split_size && it->size >= config_.max_split_size) return kNoBlock;
  if (size >= config_.max_split_size && it->size >= size + config_.max_non_split_rounding) return kNoBlock;
  const BlockId id = it->id;
  pool.blocks.erase(it);
  return id;
}

bool TorchCachingModel::can_obtain(std::size_t bytes) const {
  return bytes <= capacity_ && reserved_ <= capacity_ - bytes;
}

bool TorchCachingModel::alloc_block(Pool& pool, std::uint32_t stream, std::size_t size, std::size_t alloc_size,
                                    bool expandable, BlockId& out) {
  if (allowed_ != ~std::uint64_t{0} && reserved_ + alloc_size > allowed_) return false;
  if (expandable) {
    out = try_allocate_expandable_block(pool, stream, size);
    return out != kNoBlock;
  }
  if (!can_obtain(alloc_size)) return false;  // cudaMalloc fails
  Block seg;
  seg.addr = next_address(alloc_size, kRoundLarge);
  seg.size = alloc_size;
  seg.stream = stream;
  seg.small = pool.small;
  out = new_block(seg);
  count_reserved(static_cast<std::int64_t>(alloc_size));
  ++device_allocs_;
  return true;
}

TorchCachingModel::BlockId TorchCachingModel::alloc_found_block(BlockId id, std::size_t size, bool split) {
  BlockId block = id;
  if (split) {
    Block part = b(id);
    part.size = size;
    block = link_before(id, part);
    b(id).addr += size;
    b(id).size -= size;
    insert_free(id);
  }
  b(block).allocated = true;
  allocated_ += b(block).size;
  peak_allocated_ = std::max(peak_allocated_, allocated_);
  return block;
}

// ---- frees ----

TorchCachingModel::PendingFree TorchCachingModel::free(BlockId block, bool deferred) {
  Block& x = b(block);
  x.allocated = false;
  allocated_ -= x.size;
  if (!deferred) {
    free_block(block);
    return 0;
  }
  x.pending = true;
  pending_.insert(block);
  return (std::uint64_t{x.generation} << 32) | block;
}

void TorchCachingModel::complete_free(PendingFree ticket) {
  const auto id = static_cast<BlockId>(ticket & 0xffffffffu);
  if (ticket == 0 || id >= blocks_.size() || b(id).generation != (ticket >> 32) || !b(id).pending) return;
  b(id).pending = false;
  pending_.erase(id);
  free_block(id);
}

void TorchCachingModel::free_block(BlockId id) {
  for (BlockId neighbour : {b(id).prev, b(id).next}) try_merge(id, neighbour);
  insert_free(id);
}

std::uint64_t TorchCachingModel::try_merge(BlockId dst, BlockId src) {
  if (src == kNoBlock || b(src).allocated || b(src).pending || b(dst).mapped != b(src).mapped) return 0;
  if (b(src).mapped) erase_free(src);
  else pool_of(b(src)).unmapped.erase(unmapped_key(src));
  Block& d = b(dst);
  const Block& s = b(src);
  if (d.prev == src) {
    d.addr = s.addr;
    d.prev = s.prev;
    if (d.prev != kNoBlock) b(d.prev).next = dst;
  } else {
    d.next = s.next;
    if (d.next != kNoBlock) b(d.next).prev = dst;
  }
  const std::uint64_t subsumed = s.size;
  d.size += subsumed;
  delete_block(src);
  return subsumed;
}

void TorchCachingModel::empty_cache() { release_cached_blocks(); }

// ---- returning memory ----

void TorchCachingModel::release_block(BlockId id) {
  erase_free(id);
  count_reserved(-static_cast<std::int64_t>(b(id).size));
  delete_block(id);
}

void TorchCachingModel::garbage_collect() {
  const auto threshold = static_cast<std::uint64_t>(config_.garbage_collection_threshold * static_cast<double>(allowed_));
  if (reserved_ <= threshold) return;
  const std::uint64_t target = reserved_ - threshold;
  const auto age = [&](BlockId id) { return large_.get_free_calls - b(id).gc_base; };
  const auto whole = [&](BlockId id) { return b(id).prev == kNoBlock && b(id).next == kNoBlock; };
  std::uint64_t total_age = 0;
  std::int64_t freeable = 0;
  for (const Key& k : large_.blocks) {
    if (whole(k.id)) {
      total_age += age(k.id);
      ++freeable;
    }
  }
  if (freeable == 0) return;
  std::uint64_t reclaimed = 0;
  bool freed = true;
  while (reclaimed < target && freed && freeable > 0) {
    const double threshold_age = static_cast<double>(total_age) / static_cast<double>(freeable);
    freed = false;
    for (auto it = large_.blocks.begin(); it != large_.blocks.end();) {
      const BlockId id = it->id;
      ++it;
      if (whole(id) && b(id).segment == ~0u && static_cast<double>(age(id)) >= threshold_age) {
        freed = true;
        reclaimed += b(id).size;
        total_age -= age(id);
        --freeable;
        release_block(id);
      }
    }
  }
}

bool TorchCachingModel::release_available_cached_blocks(Pool& pool, std::uint32_t stream, std::size_t size) {
  const std::size_t max_split = config_.max_split_size;
  if (max_split == kUnlimited) return false;
  const std::size_t wanted = std::max(size, max_split);
  auto it = pool.blocks.lower_bound(Key{stream, wanted, 0, 0});
  if (it == pool.blocks.end() || it->stream != stream || b(it->id).segment != ~0u) {
    // No single block is large enough: release oversize blocks from the largest down.
    if (it == pool.blocks.begin()) return false;
    std::size_t released = 0;
    --it;
    while (released < wanted && it->size >= max_split && it->stream == stream) {
      const auto current = it;
      const bool first = current == pool.blocks.begin();
      if (!first) --it;
      if (b(current->id).segment == ~0u) {
        released += current->size;
        release_block(current->id);
      }
      if (first) break;
    }
    return released >= wanted;
  }
  release_block(it->id);
  return true;
}

void TorchCachingModel::release_cached_blocks() {
  // torch's synchronize_and_free_events: every deferred free completes first.
  for (const BlockId id : std::vector<BlockId>(pending_.begin(), pending_.end())) {
    b(id).pending = false;
    free_block(id);
  }
  pending_.clear();
  release_blocks(large_);
  release_blocks(small_);
}

void TorchCachingModel::release_blocks(Pool& pool) {
  std::vector<BlockId> whole, to_unmap;
  for (const Key& k : pool.blocks) {
    if (b(k.id).segment != ~0u) to_unmap.push_back(k.id);
    else if (b(k.id).prev == kNoBlock && b(k.id).next == kNoBlock) whole.push_back(k.id);
  }
  for (BlockId id : whole) release_block(id);
  for (BlockId id : to_unmap) {
    unmap_block(id);
    if (b(id).prev == kNoBlock && b(id).next == kNoBlock && !b(id).mapped) release_expandable_segment(id);
  }
}

void TorchCachingModel::unmap_block(BlockId id) {
  const Segment seg = segments_[b(id).segment];
  const std::uint64_t offset = b(id).addr - seg.base;
  const std::uint64_t first = (offset + seg.page - 1) / seg.page;
  const std::uint64_t last = (offset + b(id).size) / seg.page;
  if (first >= last) return;
  erase_free(id);
  const std::uint64_t start = seg.base + first * seg.page;
  const std::uint64_t bytes = (last - first) * seg.page;
  const std::uint64_t before = start - b(id).addr;
  const std::uint64_t after = b(id).size - before - bytes;
  if (before > 0) {
    Block part = b(id);
    part.size = before;
    insert_free(link_before(id, part));
  }
  if (after > 0) {
    Block part = b(id);
    part.addr = start + bytes;
    part.size = after;
    insert_free(link_after(id, part));
  }
  b(id).addr = start;
  b(id).size = bytes;
  b(id).mapped = false;
  try_merge(id, b(id).prev);
  try_merge(id, b(id).next);
  pool_of(b(id)).unmapped.insert(unmapped_key(id));
  count_reserved(-static_cast<std::int64_t>(bytes));
}

void TorchCachingModel::release_expandable_segment(BlockId id) {
  pool_of(b(id)).unmapped.erase(unmapped_key(id));
  delete_block(id);
}

// ---- expandable segments ----

TorchCachingModel::BlockId TorchCachingModel::find_expandable_block(Pool& pool, std::uint32_t stream,
                                                                    std::size_t size) {
  const auto allocatable = [&](BlockId x) { return x != kNoBlock && !b(x).allocated && !b(x).pending; };
  const auto has_room = [&](BlockId x) {
    std::uint64_t bytes = 0;
    while (bytes < size && allocatable(x)) {
      bytes += b(x).size;
      x = b(x).next;
    }
    return bytes >= size;
  };
  for (auto it = pool.unmapped.lower_bound(Key{stream, 0, 0, 0}); it != pool.unmapped.end() && it->stream == stream; ++it) {
    BlockId c = it->id;
    if (allocatable(b(c).prev)) c = b(c).prev;  // a free block just before the unmapped range
    if (has_room(c)) return c;
  }
  Segment seg;
  seg.page = pool.small ? kSmallBuffer : config_.large_segment_size;
  seg.pages = (device_memory_ + device_memory_ / 8 + seg.page - 1) / seg.page;
  seg.base = next_address(seg.pages * seg.page, seg.page);
  segments_.push_back(seg);
  Block range;
  range.addr = seg.base;
  range.size = seg.pages * seg.page;
  range.stream = stream;
  range.small = pool.small;
  range.segment = static_cast<std::uint32_t>(segments_.size() - 1);
  range.mapped = false;
  const BlockId c = new_block(range);
  pool.unmapped.insert(unmapped_key(c));
  return c;
}

bool TorchCachingModel::map_block(BlockId id, std::size_t size) {
  const Segment& seg = segments_[b(id).segment];
  const std::uint64_t offset = b(id).addr - seg.base;
  const std::uint64_t first = offset / seg.page;
  const std::uint64_t last = (offset + size + seg.page - 1) / seg.page;
  const std::uint64_t bytes = (last - first) * seg.page;
  if (!can_obtain(bytes)) return false;  // cuMemCreate fails; torch releases the pages of this call
  Pool& pool = pool_of(b(id));
  pool.unmapped.erase(unmapped_key(id));
  b(id).mapped = true;
  if (bytes < b(id).size) {
    Block rest = b(id);
    rest.addr += bytes;
    rest.size -= bytes;
    rest.mapped = false;
    const BlockId r = link_after(id, rest);
    b(id).size = bytes;
    pool.unmapped.insert(unmapped_key(r));
  }
  try_merge(id, b(id).prev);
  try_merge(id, b(id).next);
  insert_free(id);
  count_reserved(static_cast<std::int64_t>(bytes));
  ++device_allocs_;
  return true;
}

TorchCachingModel::BlockId TorchCachingModel::try_allocate_expandable_block(Pool& pool, std::uint32_t stream,
                                                                            std::size_t size) {
  BlockId c = find_expandable_block(pool, stream, size);
  if (!b(c).mapped && !map_block(c, std::min<std::size_t>(b(c).size, size))) return kNoBlock;
  while (b(c).size < size) {
    // Invariant: c is free and mapped, unmapped space follows.
    const BlockId next = b(c).next;
    if (next == kNoBlock || b(next).mapped) return kNoBlock;
    if (!map_block(next, std::min<std::size_t>(size - b(c).size, b(next).size))) return kNoBlock;
    c = next;  // merged with c
  }
  erase_free(c);
  return c;
}

}  // namespace cudakit::memory
