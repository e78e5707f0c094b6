#include "memory/detail/segment_observers.hpp"

#include <exception>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/core/log.hpp"

namespace cudakit::memory::detail {

std::uint64_t SegmentObservers::attach(SegmentObserver observer) {
  if (!observer)
    throw InvalidArgumentError("CachingAllocator::attach_segment_observer", "the observer is an empty function");
  std::lock_guard lock(mutex_);
  const std::uint64_t id = next_id_++;
  observers_.emplace_back(id, std::move(observer));
  count_.store(observers_.size(), std::memory_order_relaxed);
  return id;
}

void SegmentObservers::detach(std::uint64_t id) {
  std::lock_guard lock(mutex_);
  if (std::erase_if(observers_, [&](const auto& entry) { return entry.first == id; }) == 0) {
    throw InvalidArgumentError("CachingAllocator::detach_segment_observer",
                               cudakit::detail::concat("no segment observer is attached with id ", id));
  }
  count_.store(observers_.size(), std::memory_order_relaxed);
}

void SegmentObservers::notify(const SegmentEvent& event, std::uint64_t only) const noexcept {
  std::lock_guard lock(mutex_);
  for (const auto& [id, observe] : observers_) {
    if (only != 0 && id != only) continue;
    try {
      observe(event);
    } catch (const std::exception& e) {
      CUDAKIT_LOG(warning, "a segment observer threw (", e.what(), "); the allocator goes on");
    } catch (...) {
      CUDAKIT_LOG(warning, "a segment observer threw an exception that is not a std::exception; the allocator goes on");
    }
  }
}

}  // namespace cudakit::memory::detail
