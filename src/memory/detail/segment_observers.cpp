#include "memory/detail/segment_observers.hpp"

#include <climits>
#include <exception>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/core/log.hpp"

namespace cudakit::memory::detail {

std::uint64_t SegmentObservers::attach(SegmentObserver observer) {
  if (!observer)
    throw InvalidArgumentError("CachingAllocator::attach_segment_observer", "the observer is an empty function");
  const int id = observers_.add(std::move(observer));
  count_.fetch_add(1, std::memory_order_relaxed);
  return static_cast<std::uint64_t>(id);
}

void SegmentObservers::detach(std::uint64_t id) {
  // ListenerSet's ids are ints from 1; any other id names no observer.
  const bool known = id >= 1 && id <= static_cast<std::uint64_t>(INT_MAX);
  if (!known || observers_.remove(static_cast<int>(id)) == nullptr) {
    throw InvalidArgumentError("CachingAllocator::detach_segment_observer",
                               cudakit::detail::concat("no segment observer is attached with id ", id));
  }
  count_.fetch_sub(1, std::memory_order_relaxed);
}

void SegmentObservers::notify(const SegmentEvent& event, std::uint64_t only) const noexcept {
  std::lock_guard lock(notify_mutex_);
  observers_.for_each_with_id([&](int id, const SegmentObserver& observe) {
    if (only != 0 && static_cast<std::uint64_t>(id) != only) return;
    try {
      observe(event);
    } catch (const std::exception& e) {
      CUDAKIT_LOG(warning, "a segment observer threw (", e.what(), "); the allocator goes on");
    } catch (...) {
      CUDAKIT_LOG(warning, "a segment observer threw an exception that is not a std::exception; the allocator goes on");
    }
  });
}

}  // namespace cudakit::memory::detail
