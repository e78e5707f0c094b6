#include "sanitizer/detail/stack_table.hpp"

#include <algorithm>
#include <limits>

namespace cudakit::sanitizer::detail {
namespace {

std::uint64_t hash_frames(std::span<void* const> frames) {
  std::uint64_t h = 0x9e3779b97f4a7c15u ^ frames.size();
  for (void* f : frames) {
    h ^= reinterpret_cast<std::uintptr_t>(f);
    h *= 0xbf58476d1ce4e5b9u;
    h ^= h >> 31;
  }
  return h;
}

}  // namespace

std::uint32_t StackTable::intern(std::span<void* const> frames) {
  if (frames.empty()) return kNoStack;
  const std::uint64_t h = hash_frames(frames);
  if (slots_.empty()) slots_.assign(1024, kNoStack);
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t i = h & mask;; i = (i + 1) & mask) {
    const std::uint32_t id = slots_[i];
    if (id == kNoStack) break;
    const Stack& s = stacks_[id - 1];
    if (s.hash == h && std::ranges::equal(this->frames(id), frames)) return id;
  }
  if (stacks_.size() >= kMaxStacks ||
      frames_.size() + frames.size() > std::numeric_limits<std::uint32_t>::max()) {
    ++dropped_;
    return kNoStack;
  }
  stacks_.push_back({.hash = h, .offset = static_cast<std::uint32_t>(frames_.size()),
                     .size = static_cast<std::uint32_t>(frames.size())});
  frames_.insert(frames_.end(), frames.begin(), frames.end());
  const auto id = static_cast<std::uint32_t>(stacks_.size());
  // At most half full: probes stay short.
  if (2 * stacks_.size() > slots_.size()) {
    grow();
  } else {
    for (std::size_t i = h & mask;; i = (i + 1) & mask) {
      if (slots_[i] == kNoStack) {
        slots_[i] = id;
        break;
      }
    }
  }
  return id;
}

void StackTable::grow() {
  slots_.assign(slots_.size() * 2, kNoStack);
  const std::size_t mask = slots_.size() - 1;
  for (std::uint32_t id = 1; id <= stacks_.size(); ++id) {
    std::size_t i = stacks_[id - 1].hash & mask;
    while (slots_[i] != kNoStack) i = (i + 1) & mask;
    slots_[i] = id;
  }
}

std::span<void* const> StackTable::frames(std::uint32_t id) const {
  if (id == kNoStack || id > stacks_.size()) return {};
  const Stack& s = stacks_[id - 1];
  return std::span<void* const>(frames_).subspan(s.offset, s.size);
}

}  // namespace cudakit::sanitizer::detail
