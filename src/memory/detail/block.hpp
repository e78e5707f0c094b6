#pragma once
// Block: one piece of an arena (a segment or an expandable range), allocated, free, or pending
// (freed while other streams may still use it). A shard recycles its blocks (Shard::new_block).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "cudakit/memory/segment_provider.hpp"
#include "cudakit/memory/snapshot.hpp"

namespace cudakit::memory::detail {

inline constexpr std::size_t kRound = 512;  // every block is a multiple of this
// A request above this (1 EiB, torch's limit too) is refused at once as out of memory: no device
// holds it, and the rounding and accounting of larger sizes would wrap around std::size_t.
inline constexpr std::size_t kLargestRequest = std::size_t{1} << 60;

// Note [Allocator internals are hidden]
// The caching allocator's internal types (Block, Arena, Shard, Pool, FreeIndex, ArenaTable,
// IsolatedAllocator, ReservedBytes, AllocationGrants, PendingFrees, History, OomObservers) have
// hidden visibility, and so does every function that takes one, so that calls between the
// allocator's files bind inside libcudakit: a shared library's functions of default visibility
// may be interposed, and are called through the PLT. The policy engine that uses these types
// (caching_allocator.cpp) goes further and sits in an anonymous namespace: its functions are
// local to that file, so GCC, seeing every call, inlines the ones called once and specializes
// the rest for their callers. As hidden functions alone they kept GCC from inlining shard_for
// and find_free into allocate(), which then took 5% more instructions replaying serve_kv.

struct Arena;
struct Block;
struct Shard;

// A block's plain fields, apart from its two owning members, so that a recycled block is
// reset by one aggregate assignment instead of rebuilding (and freeing) its vector.
struct [[gnu::visibility("hidden")]] BlockFields {
  char* ptr = nullptr;
  std::size_t size = 0;
  std::size_t requested = 0;
  Block* prev = nullptr;  // address neighbours inside the arena
  Block* next = nullptr;
  Block* free_prev = nullptr;  // links inside a free-list bin
  Block* free_next = nullptr;
  Arena* arena = nullptr;
  std::uint32_t bin = 0;
  // pending: freed by the program, active until the events of the streams record_stream() named
  // complete. returning: a lent block its borrower freed, inactive as the program sees it, back
  // in its shard's cache once the borrower's work is done (See Note [Lent blocks in the
  // statistics] in caching_allocator.cpp).
  enum class State : std::uint8_t { free, allocated, pending, returning } state = State::free;
  bool indexed = false;
  // The shard of the other stream this block is lent to (See Note [Memory across streams]).
  Shard* borrower = nullptr;
  // Free blocks: the StreamMarks stamp of the last free on the shard's stream whose work may
  // still use the block (0: none may).
  std::uint64_t freed_at = 0;
  bool oversize = false;  // allocated at or above max_split_size (counted in oversize_allocations)
};
struct [[gnu::visibility("hidden")]] Block : BlockFields {
  std::vector<StreamKey> extra_streams;  // record_stream
  std::shared_ptr<const StackFrames> frames;

  void reset() noexcept {
    static_cast<BlockFields&>(*this) = BlockFields{};
    extra_streams.clear();  // keeps its capacity for the block's next life
    frames.reset();
  }
};

}  // namespace cudakit::memory::detail
