#pragma once
// HeldBlocks: a shard's blocks that something outside the allocator holds (another process that
// opened them through IPC), which the allocator must not reuse even after the program frees
// them (See Note [External holds] in caching_allocator.cpp).

#include <cstddef>
#include <cstdint>
#include <map>

#include "memory/detail/block.hpp"

namespace cudakit::memory::detail {

struct [[gnu::visibility("hidden")]] HeldBlock {
  Block* block = nullptr;
  std::uint32_t holds = 0;  // at least 1 while in the table
  bool freed = false;       // the program has freed it: pending until the last hold goes
};

class [[gnu::visibility("hidden")]] HeldBlocks {
 public:
  // The entry of the block that starts at `ptr`, or nullptr.
  [[nodiscard]] HeldBlock* find(const void* ptr) noexcept {
    auto it = held_.find(ptr);
    return it == held_.end() ? nullptr : &it->second;
  }
  // A held block the program has not freed (still an allocation), or nullptr.
  [[nodiscard]] Block* find_allocated(const void* ptr) noexcept {
    HeldBlock* h = find(ptr);
    return h && !h->freed ? h->block : nullptr;
  }
  // Starts holding `b` (not yet in the table) once.
  void add(Block* b) { held_.emplace(b->ptr, HeldBlock{b, 1, false}); }
  void erase(const void* ptr) noexcept { held_.erase(ptr); }
  [[nodiscard]] std::size_t size() const noexcept { return held_.size(); }

 private:
  // Few blocks are held at a time (one per exported tensor), and none on the fast path: a map
  // is enough.
  std::map<const void*, HeldBlock> held_;
};

}  // namespace cudakit::memory::detail
