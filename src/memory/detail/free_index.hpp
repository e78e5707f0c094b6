#pragma once
// FreeIndex: a shard's free blocks by size, for best-fit search (See Note [Free-block index]).

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "memory/detail/block.hpp"

namespace cudakit::memory::detail {

// Note [Free-block index]
// Free blocks sit in size-class bins: 64 linear bins of 512 B up to 32 KiB, then 32 bins per
// power of two (sizes within ~3% share a bin), with a bitmap of non-empty bins. A request
// scans its own bin for the best fit (smallest block, then lowest address; the first
// kScanLimit entries), then takes the best of the next non-empty bin, every member of which
// fits. That is best-fit within 3%, found in a few dozen instructions instead of a tree walk.
class [[gnu::visibility("hidden")]] FreeIndex {
 public:
  static constexpr std::uint32_t kBins = 64 + 32 * 34;
  static constexpr int kScanLimit = 64;  // entries examined per bin

  static std::uint32_t bin_of(std::size_t size) {
    const std::size_t units = size / kRound;
    if (units < 64) return static_cast<std::uint32_t>(units);
    const int fl = std::bit_width(units) - 1;  // >= 6
    const std::size_t sl = (units >> (fl - 5)) & 31;
    return static_cast<std::uint32_t>(64 + (fl - 6) * 32 + sl);
  }

  void insert(Block* b) {
    b->bin = bin_of(b->size);
    if (!heads_) [[unlikely]] heads_ = std::make_unique<Block*[]>(kBins);
    Block*& head = heads_[b->bin];
    b->free_prev = nullptr;
    b->free_next = head;
    if (head) head->free_prev = b;
    head = b;
    bits_[b->bin / 64] |= 1ull << (b->bin % 64);
    b->indexed = true;
  }

  void remove(Block* b) {
    if (b->free_prev) b->free_prev->free_next = b->free_next;
    else heads_[b->bin] = b->free_next;
    if (b->free_next) b->free_next->free_prev = b->free_prev;
    if (!heads_[b->bin]) bits_[b->bin / 64] &= ~(1ull << (b->bin % 64));
    b->free_prev = b->free_next = nullptr;
    b->indexed = false;
  }

  // Best fit per Note [Free-block index]; `acceptable` vetoes blocks (max_split_size rules).
  template <class Acceptable>
  Block* find(std::size_t size, Acceptable&& acceptable) const {
    std::uint32_t bin = bin_of(size);
    // The bins end at 2^49 bytes (512 TiB), beyond any device: no block is that large, but a
    // request may be (torch's tests ask for 800,000,000 GiB), and it fits nothing.
    if (bin >= kBins || !heads_) return nullptr;
    if (Block* b = best_in(heads_[bin], size, acceptable)) return b;
    for (bin = next_nonempty(bin + 1); bin < kBins; bin = next_nonempty(bin + 1)) {
      if (Block* b = best_in(heads_[bin], size, acceptable)) return b;
    }
    return nullptr;
  }

  [[nodiscard]] std::size_t largest() const {
    for (int w = static_cast<int>(bits_.size()) - 1; w >= 0; --w) {
      if (!bits_[w]) continue;
      const int bin = w * 64 + 63 - std::countl_zero(bits_[w]);
      std::size_t best = 0;
      for (Block* b = heads_[bin]; b; b = b->free_next) best = std::max(best, b->size);
      return best;
    }
    return 0;
  }

 private:
  template <class Acceptable>
  static Block* best_in(Block* head, std::size_t size, Acceptable& acceptable) {
    Block* best = nullptr;
    int scanned = 0;
    for (Block* b = head; b && scanned < kScanLimit; b = b->free_next, ++scanned) {
      if (b->size < size || !acceptable(b)) continue;
      if (!best || b->size < best->size || (b->size == best->size && b->ptr < best->ptr)) best = b;
      if (best->size == size) break;
    }
    return best;
  }
  [[nodiscard]] std::uint32_t next_nonempty(std::uint32_t bin) const {
    if (bin >= kBins) return kBins;
    std::size_t w = bin / 64;
    std::uint64_t word = bits_[w] & (~0ull << (bin % 64));
    while (true) {
      if (word) return static_cast<std::uint32_t>(w * 64 + std::countr_zero(word));
      if (++w == bits_.size()) return kBins;
      word = bits_[w];
    }
  }
  // Allocated at the first insert: a shard whose stream never frees into its own memory (a
  // borrower, See Note [Streams at any count] in caching_allocator.cpp) stays small.
  std::unique_ptr<Block*[]> heads_;
  std::array<std::uint64_t, (kBins + 63) / 64> bits_{};
};

}  // namespace cudakit::memory::detail
