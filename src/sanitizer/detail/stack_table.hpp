#pragma once
// StackTable: each distinct captured stack (its return addresses) stored once, named by a 32-bit
// id, so that an operation keeps an id rather than a copy of its stack: a program issues its
// operations from a few hundred call paths, millions of times each. Interning costs a hash of
// the addresses and one probe of an open-addressed table; a stack seen before allocates nothing.

#include <cstdint>
#include <span>
#include <vector>

namespace cudakit::sanitizer::detail {

class StackTable {
 public:
  static constexpr std::uint32_t kNoStack = 0;
  // Distinct stacks kept at most; later new ones get kNoStack (and count as dropped).
  static constexpr std::uint32_t kMaxStacks = 1u << 20;

  // The id of `frames` (kNoStack for an empty stack).
  std::uint32_t intern(std::span<void* const> frames);
  // The frames of an id intern gave; empty for kNoStack.
  [[nodiscard]] std::span<void* const> frames(std::uint32_t id) const;
  [[nodiscard]] std::size_t size() const noexcept { return stacks_.size(); }
  [[nodiscard]] std::uint64_t dropped() const noexcept { return dropped_; }

 private:
  struct Stack {
    std::uint64_t hash = 0;
    std::uint32_t offset = 0;  // into frames_
    std::uint32_t size = 0;
  };
  void grow();

  std::vector<void*> frames_;         // every stack's addresses, back to back
  std::vector<Stack> stacks_;         // by id - 1
  std::vector<std::uint32_t> slots_;  // open addressing over ids (kNoStack: empty), size a power of 2
  std::uint64_t dropped_ = 0;
};

}  // namespace cudakit::sanitizer::detail
