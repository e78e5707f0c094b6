#pragma once
// @brief Segment observers: functions a caching allocator calls as memory from its provider comes and
// goes — each classic segment after allocate_segment and before free_segment, each chunk of an
// expandable range after map() and before unmap() — so that something which must know the
// memory by its driver ranges can keep in step with the allocator (NCCL's buffer registration,
// as torch's TORCH_NCCL_USE_TENSOR_REGISTER_ALLOCATOR_HOOK does).

#include <cstddef>
#include <cstdint>
#include <functional>

#include "cudakit/memory/pool_id.hpp"
#include "cudakit/memory/segment_provider.hpp"

namespace cudakit::memory {

// One range of provider memory that comes or goes.
struct SegmentEvent {
  // Whether the range comes or goes.
  enum class Kind : std::uint8_t {
    mapped,     // [base, base + bytes) is backed and about to serve allocations
    unmapping,  // [base, base + bytes) is about to be returned to the provider
  };
  Kind kind = Kind::mapped;  // whether the range comes or goes
  int device = 0;  // the allocator's device ordinal
  void* base = nullptr;  // the range's start
  std::size_t bytes = 0;  // the range's length
  // A chunk of an expandable range (one map() call; chunks are unmapped last first, each
  // exactly as mapped), rather than a whole classic segment.
  bool expandable = false;
  PoolId pool;  // the pool whose memory it is
  StreamKey stream = 0;  // the stream whose requests the range serves
};

// Note [Segment observers' locks]
// An observer is called on the thread that makes the allocator map or unmap, with the lock of
// the allocator's shard for that (pool, stream) held, and with the allocator's observer mutex
// held (so that calls are serialized and a detach waits for calls in flight). It must therefore
// not allocate or free through that allocator, nor wait for a thread that may; it may take
// locks of its own that nothing holds while allocating. It must not throw (what it throws is
// logged and dropped: a segment is returned all the same). An unmapping event always comes
// before the memory is returned, so an observer may still use the range during the call.

// A function told of every range an allocator maps and unmaps (CachingAllocator::
// attach_segment_observer). See Note [Segment observers' locks] for what it may do.
using SegmentObserver = std::function<void(const SegmentEvent&)>;

}  // namespace cudakit::memory
