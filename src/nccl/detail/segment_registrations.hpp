#pragma once
// SegmentRegistrations: a communicator's registrations of the caching allocator's segments
// with NCCL, kept in step with the allocator's segments through a segment observer.
//
// Note [Registering the allocator's segments]
// torch's TORCH_NCCL_USE_TENSOR_REGISTER_ALLOCATOR_HOOK registers every segment its caching
// allocator maps with every communicator, so that NCCL's zero-copy paths (NVLS, CollNet,
// user-buffer p2p) find the buffers of collectives registered without the program asking.
// cudakit does the same where CommunicatorOptions::register_allocator_segments (or
// CUDAKIT_NCCL_REGISTER_ALLOCATOR=1) asks for it:
//  - at creation, every range the device's allocator has mapped is registered (attach replays
//    them), then each new one as it is mapped: a classic segment whole, an expandable range
//    chunk by chunk (each map() call; the allocator unmaps chunks exactly as mapped);
//  - each is deregistered before the allocator returns it (the observer's unmapping event
//    comes before free_segment/unmap), and every one left when the communicator goes, after
//    its work has drained and before ncclCommDestroy; an aborted communicator took its
//    registrations with it, so nothing is deregistered then.
// Locks, in the only order they are taken: the allocator's shard lock, the allocator's
// observer mutex, this object's mutex, the communicator's comm_mutex, NCCL's own. Nothing that
// holds comm_mutex allocates from the caching allocator (every NCCL call under it allocates
// with NCCL's own cudaMalloc), so the order has no cycle. The cost: a thread that maps a
// segment waits for the communicator's NCCL call in progress, an abort included. A range that
// maps twice in the replay's window is registered once (keyed by its base).
// Registration is an optimisation: a range NCCL refuses to register is logged and used
// unregistered, and registration never throws into the allocator.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <vector>

#include "cudakit/memory/caching_allocator.hpp"
#include "cudakit/nccl/registered_segment.hpp"

namespace cudakit::nccl::detail {

class SegmentRegistrations {
 public:
  // Registers a range: NCCL's handle, or nullptr where it is not registered (must not throw).
  using Register = std::function<void*(void* base, std::size_t bytes)>;
  using Deregister = std::function<void(void* handle)>;

  // Attaches to `allocator` and registers what it has mapped. @throws what attaching throws.
  SegmentRegistrations(memory::CachingAllocator& allocator, Register register_range, Deregister deregister_range);
  ~SegmentRegistrations();
  SegmentRegistrations(const SegmentRegistrations&) = delete;
  SegmentRegistrations& operator=(const SegmentRegistrations&) = delete;

  // Detaches from the allocator, then deregisters every range left. Idempotent.
  void close() noexcept;
  // The ranges registered now, in address order.
  [[nodiscard]] std::vector<RegisteredSegment> segments() const;

 private:
  struct Entry {
    std::size_t bytes;
    void* handle;
  };
  void on_event(const memory::SegmentEvent& event) noexcept;

  memory::CachingAllocator& allocator_;
  Register register_;
  Deregister deregister_;
  std::uint64_t observer_ = 0;
  mutable std::mutex mutex_;
  std::map<std::uintptr_t, Entry> entries_;  // by base address
};

}  // namespace cudakit::nccl::detail
