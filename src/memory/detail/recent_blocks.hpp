#pragma once
// RecentBlocks: a shard's last few freed blocks, waiting unmerged for an allocation of their size
// (See Note [Recently freed blocks] in caching_allocator.cpp).

#include <array>
#include <cstddef>

#include "memory/detail/block.hpp"

namespace cudakit::memory::detail {

class [[gnu::visibility("hidden")]] RecentBlocks {
 public:
  static constexpr std::size_t kSlots = 4;

  bool empty() const noexcept { return count_ == 0; }

  // The newest waiting block of exactly `size` bytes, taken out; nullptr when none has that size.
  Block* take(std::size_t size) noexcept {
    if (count_ == 0) return nullptr;
    // The newest first and on its own: a loop's temporary freed and asked for again, the
    // commonest case, costs what one slot cost.
    if (slots_[count_ - 1]->size == size) [[likely]] return slots_[--count_];
    for (std::size_t i = count_ - 1; i-- > 0;) {
      if (slots_[i]->size == size) return remove_at(i);
    }
    return nullptr;
  }

  // The oldest block, taken out to make room, when every slot holds one; else nullptr.
  Block* make_room() noexcept { return count_ == kSlots ? remove_at(0) : nullptr; }

  // Adds `b` as the newest (after make_room() when full).
  void push(Block* b) noexcept { slots_[count_++] = b; }

  // A waiting block that lies next to `b` in its arena, taken out; nullptr when none does.
  Block* take_neighbour_of(const Block* b) noexcept {
    for (std::size_t i = 0; i < count_; ++i) {
      if (slots_[i] == b->prev || slots_[i] == b->next) return remove_at(i);
    }
    return nullptr;
  }

  // The oldest block, taken out; nullptr when none waits.
  Block* take_oldest() noexcept { return count_ ? remove_at(0) : nullptr; }

 private:
  Block* remove_at(std::size_t i) noexcept {
    Block* b = slots_[i];
    for (std::size_t j = i + 1; j < count_; ++j) slots_[j - 1] = slots_[j];
    --count_;
    return b;
  }

  std::array<Block*, kSlots> slots_{};
  std::size_t count_ = 0;
};

}  // namespace cudakit::memory::detail
