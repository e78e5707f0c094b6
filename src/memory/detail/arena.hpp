#pragma once
// Arena: one classic segment or one expandable range (See Note [Expandable arenas] in
// caching_allocator.cpp), with its blocks in address order.

#include <cstddef>
#include <vector>

namespace cudakit::memory::detail {

struct Block;
struct Shard;

struct [[gnu::visibility("hidden")]] Arena {
  char* base = nullptr;
  std::size_t range = 0;   // bytes of address space
  std::size_t mapped = 0;  // bytes backed by memory, from base
  bool expandable = false;
  bool small = false;      // classic small-pool segment
  bool oversize = false;   // classic segment above max_split_size (counted in oversize_segments)
  Shard* shard = nullptr;
  Block* first = nullptr;
  Block* last = nullptr;
  std::vector<std::size_t> chunks;  // expandable: sizes of the mapped chunks, in address order
};

}  // namespace cudakit::memory::detail
