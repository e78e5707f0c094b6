#pragma once
// An open-addressing map from block addresses to blocks: linear probing with backward-shift
// deletion (no tombstones), so lookups stay short under the allocator's constant churn.
// std::unordered_map allocates a node per insert, which alone costs more than our whole
// allocation fast path.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace cudakit::memory::detail {

template <class Value>
class PointerMap {
 public:
  PointerMap() { slots_.resize(std::size_t{1} << (64 - shift_)); }

  void insert(const void* key, Value* value) {
    // At most half full: probe runs stay a slot or two long, where at three quarters the
    // allocator's clustered addresses made erase walk a dozen slots.
    if ((size_ + 1) * 2 > slots_.size()) grow();
    place(reinterpret_cast<std::uintptr_t>(key), value);
    ++size_;
  }

  [[nodiscard]] Value* find(const void* key) const noexcept {
    const auto k = reinterpret_cast<std::uintptr_t>(key);
    for (std::size_t i = index(k);; i = (i + 1) & mask()) {
      const Slot& s = slots_[i];
      if (s.key == k) return s.value;
      if (s.key == 0) return nullptr;
    }
  }

  // Removes and returns the value, or nullptr if absent.
  Value* erase(const void* key) noexcept {
    const auto k = reinterpret_cast<std::uintptr_t>(key);
    std::size_t i = index(k);
    for (;; i = (i + 1) & mask()) {
      if (slots_[i].key == k) break;
      if (slots_[i].key == 0) return nullptr;
    }
    Value* value = slots_[i].value;
    // Backward shift: move later members of the probe run into the hole while they may.
    for (std::size_t j = (i + 1) & mask();; j = (j + 1) & mask()) {
      if (slots_[j].key == 0) break;
      const std::size_t home = index(slots_[j].key);
      // Move slot j to i if i lies cyclically in [home, j).
      if (((j - home) & mask()) >= ((j - i) & mask())) {
        slots_[i] = slots_[j];
        i = j;
      }
    }
    slots_[i] = Slot{};
    --size_;
    return value;
  }

  [[nodiscard]] std::size_t size() const noexcept { return size_; }

  template <class F>
  void for_each(F&& f) const {
    for (const Slot& s : slots_) {
      if (s.key != 0) f(reinterpret_cast<const void*>(s.key), s.value);
    }
  }

 private:
  struct Slot {
    std::uintptr_t key = 0;
    Value* value = nullptr;
  };
  [[nodiscard]] std::size_t mask() const noexcept { return slots_.size() - 1; }
  [[nodiscard]] std::size_t index(std::uintptr_t k) const noexcept {
    // Fibonacci hashing: the product's top bits depend on every bit of the key (its low bits,
    // which an earlier version used, only on the key's low bits). Allocations are 512-byte
    // aligned, so the constant low bits are dropped first.
    return static_cast<std::size_t>(((k >> 9) * 0x9E3779B97F4A7C15ull) >> shift_);
  }
  void place(std::uintptr_t k, Value* v) {
    std::size_t i = index(k);
    while (slots_[i].key != 0) i = (i + 1) & mask();
    slots_[i] = Slot{k, v};
  }
  void grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    --shift_;
    for (const Slot& s : old) {
      if (s.key != 0) place(s.key, s.value);
    }
  }
  std::vector<Slot> slots_;
  std::size_t size_ = 0;
  int shift_ = 64 - 7;  // 128 slots to begin with; index() keeps the top 64 - shift_ bits
};

}  // namespace cudakit::memory::detail
