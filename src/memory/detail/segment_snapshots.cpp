#include "memory/detail/segment_snapshots.hpp"

#include <cstdint>
#include <utility>

#include "memory/detail/pool.hpp"
#include "memory/detail/shard.hpp"

namespace cudakit::memory::detail {

namespace {

BlockSnapshot::State snapshot_state(Block::State state) {
  switch (state) {
    case Block::State::allocated: return BlockSnapshot::State::active_allocated;
    case Block::State::pending: return BlockSnapshot::State::active_pending_free;
    default: return BlockSnapshot::State::inactive;
  }
}

}  // namespace

void append_segment_snapshots(const Shard& s, int device, std::vector<SegmentSnapshot>& out) {
  for (const auto& a : s.arenas) {
    if (a->mapped == 0) continue;
    SegmentSnapshot seg;
    seg.device = device;
    seg.address = reinterpret_cast<std::uintptr_t>(a->base);
    seg.total_size = a->mapped;
    seg.stream = s.stream;
    seg.is_small = a->small;
    seg.is_expandable = a->expandable;
    seg.pool = s.pool->id;
    for (const Block* b = a->first; b; b = b->next) {
      const bool allocated = b->state == Block::State::allocated;
      BlockSnapshot bs;
      bs.address = reinterpret_cast<std::uintptr_t>(b->ptr);
      bs.size = b->size;
      bs.requested_size = allocated ? b->requested : 0;
      bs.state = snapshot_state(b->state);
      bs.frames = b->frames;
      if (allocated) {
        seg.allocated_size += b->size;
        seg.requested_size += b->requested;
      }
      if (allocated || b->state == Block::State::pending) seg.active_size += b->size;
      seg.blocks.push_back(std::move(bs));
    }
    out.push_back(std::move(seg));
  }
}

}  // namespace cudakit::memory::detail
