#pragma once
// ArenaTable: which arena, of every pool and stream, holds an address. deallocate() looks its
// pointer up here without a lock; the table is an immutable sorted vector, replaced
// (copy-on-write) when an arena or segment is created or returned (See Note [Shards and
// statistics] in shard.hpp).

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "memory/detail/isolated_allocator.hpp"

namespace cudakit::memory::detail {

struct Arena;

// Note [Arena table on lines of its own]
// Every deallocate, from every thread, reads the arena table. It is built by whichever thread
// registered the latest arena, so with the default allocator its vector and buffer came from that
// thread's malloc arena, next to the blocks and maps it writes on each of its own allocations:
// false sharing that made every other thread's frees miss. Table memory is therefore allocated
// in whole 128-byte lines (two, for the adjacent-line prefetcher) that hold nothing else.
class [[gnu::visibility("hidden")]] ArenaTable {
 public:
  ArenaTable();
  ArenaTable(const ArenaTable&) = delete;
  ArenaTable& operator=(const ArenaTable&) = delete;

  // Adds [a->base, a->base + a->range).
  void insert(Arena* a);
  void erase(Arena* a);

  // The arena holding `p`, or nullptr. Takes no lock.
  Arena* find(const void* p) const noexcept {
    const auto& t = current_.load(std::memory_order_acquire)->ranges;
    const auto v = reinterpret_cast<std::uintptr_t>(p);
    auto it = std::upper_bound(t.begin(), t.end(), v,
                               [](std::uintptr_t x, const Range& r) { return x < r.begin; });
    if (it == t.begin()) return nullptr;
    --it;
    return v < it->end ? it->arena : nullptr;
  }

 private:
  struct Range {
    std::uintptr_t begin;
    std::uintptr_t end;
    Arena* arena;
  };
  // One version of the table; versions are kept until the allocator goes, since a lookup may
  // still be reading an older one.
  struct alignas(kIsolation) Version {
    std::vector<Range, IsolatedAllocator<Range>> ranges;
  };
  const Version* publish_locked(Version next);

  std::mutex mutex_;
  std::atomic<const Version*> current_{nullptr};
  std::vector<std::unique_ptr<const Version>> versions_;
};

}  // namespace cudakit::memory::detail
