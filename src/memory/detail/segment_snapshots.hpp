#pragma once
// A shard's segments as MemorySnapshot reports them.

#include <vector>

#include "cudakit/memory/snapshot.hpp"

namespace cudakit::memory::detail {

struct Shard;

// Appends one SegmentSnapshot for each of `s`'s mapped arenas on `device`, with its blocks in
// address order (`s` locked, its recently freed blocks returned to the free index first, so that
// the blocks are seen merged as a program sees them).
void append_segment_snapshots(const Shard& s, int device, std::vector<SegmentSnapshot>& out);

}  // namespace cudakit::memory::detail
