#pragma once
// SegmentObservers: the functions an allocator calls as its segments are mapped and unmapped
// (CachingAllocator::attach_segment_observer; See Note [Segment observers' locks] in
// memory/segment_observer.hpp), kept in core's one observer mechanism (ListenerSet, See Note
// [Listener snapshots]).

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>

#include "cudakit/core/detail/listener_set.hpp"
#include "cudakit/memory/segment_observer.hpp"

namespace cudakit::memory::detail {

class [[gnu::visibility("hidden")]] SegmentObservers {
 public:
  // @throws InvalidArgumentError for an empty function.
  std::uint64_t attach(SegmentObserver observer);
  // After it returns, the observer is not called again. @throws InvalidArgumentError for an id
  // that is not attached.
  void detach(std::uint64_t id);
  // Whether anyone listens: one relaxed load, for the allocator's paths.
  [[nodiscard]] bool any() const noexcept { return count_.load(std::memory_order_relaxed) != 0; }
  // Calls every observer (or only `only`'s, when not 0) with `event`, one notification at a
  // time; what they throw is logged.
  void notify(const SegmentEvent& event, std::uint64_t only = 0) const noexcept;

 private:
  cudakit::detail::ListenerSet<SegmentObserver> observers_;
  // Serializes notifications (Note [Segment observers' locks]); add and remove do not take it.
  mutable std::mutex notify_mutex_;
  std::atomic<std::size_t> count_{0};
};

}  // namespace cudakit::memory::detail
