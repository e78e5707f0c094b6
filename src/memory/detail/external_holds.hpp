#pragma once
// ExternalHolds: blocks held from outside the process (CUDA IPC) outliving the program's free
// (See Note [External holds]), a part of the caching allocator's policy engine.

#include <cstddef>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/memory/snapshot.hpp"
#include "memory/detail/arena_table.hpp"
#include "memory/detail/block.hpp"
#include "memory/detail/shard.hpp"

namespace cudakit::memory::detail {

// The external-hold part of the caching allocator's Engine, which derives from it (CRTP; See
// Note [Allocator internals are hidden] in block.hpp).
template <class Engine>
struct [[gnu::visibility("hidden")]] ExternalHolds {
  Engine& e() noexcept { return static_cast<Engine&>(*this); }
  const Engine& e() const noexcept { return static_cast<const Engine&>(*this); }

  // Note [External holds]
  // A block exported to another process (memory/ipc/ipc_memory_export.hpp) must outlive the
  // exporter's free until every importer has closed it, or the allocator would hand memory the
  // importer still reads and writes to a new allocation. add_external_hold() moves the block
  // out of the shard's `live` map into `held`; deallocate() looks in `held` only when `live`
  // misses (the path that otherwise reports an unknown pointer), so a block without holds
  // costs the fast path nothing. A held block the program frees is freed as the program sees
  // it (allocated bytes fall, the history records the free request) but stays active and
  // pending, like a free waiting for record_stream()'s streams; the last release completes
  // the free, through those streams' events when there are any. Holding a block stops active
  // mirroring allocated (See Note [Active mirrors allocated]), as record_stream() does.

  // deallocate() of a pointer missing from `live` (shard locked).
  void deallocate_held(Shard& s, void* ptr) {
    detail::HeldBlock* h = s.held.find(ptr);
    if (!h || h->freed) e().unknown_pointer("CachingAllocator::deallocate", ptr);
    e().count_free(s, h->block, false);
    h->freed = true;
    h->block->state = Block::State::pending;
  }

  void add_external_hold(void* ptr) {
    constexpr const char* api = "CachingAllocator::add_external_hold";
    Arena* a = ptr ? e().arena_table.find(ptr) : nullptr;
    if (!a) e().unknown_pointer(api, ptr);
    Shard& s = *a->shard;
    std::lock_guard lock(s.lock);
    if (Block* b = s.live.erase(ptr)) {
      e().stop_mirroring_active(s);
      s.held.add(b);
      return;
    }
    detail::HeldBlock* h = s.held.find(ptr);
    if (!h || h->freed) e().unknown_pointer(api, ptr);
    ++h->holds;
  }

  void release_external_hold(void* ptr) {
    auto no_hold = [ptr] {
      throw InvalidArgumentError("CachingAllocator::release_external_hold",
                                 cudakit::detail::concat("pointer ", ptr, " has no external hold in this allocator"));
    };
    Arena* a = ptr ? e().arena_table.find(ptr) : nullptr;
    if (!a) no_hold();
    Shard& s = *a->shard;
    std::lock_guard lock(s.lock);
    detail::HeldBlock* h = s.held.find(ptr);
    if (!h) no_hold();
    if (--h->holds > 0) return;
    Block* b = h->block;
    const bool freed = h->freed;
    s.held.erase(ptr);
    if (!freed) {
      s.live.insert(b->ptr, b);
    } else if (!b->extra_streams.empty()) {
      s.pending_frees.add(b, *e().events);
    } else {
      e().account_inactive(s, b);
      e().history.trace(TraceEntry::Action::free_completed, b->ptr, b->size, s.stream, b->frames);
      e().free_block(s, b);
    }
  }

  std::size_t external_holds(const void* ptr) const {
    Arena* a = ptr ? e().arena_table.find(ptr) : nullptr;
    if (!a) return 0;
    std::lock_guard lock(a->shard->lock);
    const detail::HeldBlock* h = a->shard->held.find(ptr);
    return h ? h->holds : 0;
  }
};

}  // namespace cudakit::memory::detail
