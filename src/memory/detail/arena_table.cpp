#include "memory/detail/arena_table.hpp"

#include "memory/detail/arena.hpp"

namespace cudakit::memory::detail {

ArenaTable::ArenaTable() { current_.store(publish_locked(Version{})); }

const ArenaTable::Version* ArenaTable::publish_locked(Version next) {
  versions_.push_back(std::make_unique<const Version>(std::move(next)));
  return versions_.back().get();
}

void ArenaTable::insert(Arena* a) {
  std::lock_guard lock(mutex_);
  Version next = *current_.load();
  const auto begin = reinterpret_cast<std::uintptr_t>(a->base);
  auto it = std::lower_bound(next.ranges.begin(), next.ranges.end(), begin,
                             [](const Range& r, std::uintptr_t v) { return r.begin < v; });
  next.ranges.insert(it, Range{begin, begin + a->range, a});
  current_.store(publish_locked(std::move(next)), std::memory_order_release);
}

void ArenaTable::erase(Arena* a) {
  std::lock_guard lock(mutex_);
  Version next = *current_.load();
  std::erase_if(next.ranges, [&](const Range& r) { return r.arena == a; });
  current_.store(publish_locked(std::move(next)), std::memory_order_release);
}

}  // namespace cudakit::memory::detail
