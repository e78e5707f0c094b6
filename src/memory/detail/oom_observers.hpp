#pragma once
// OomObservers: the functions an allocator calls before it throws OutOfMemoryError
// (CachingAllocator::attach_oom_observer), kept in core's one observer mechanism (ListenerSet,
// See Note [Listener snapshots]).

#include <cstdint>
#include <string>

#include "cudakit/core/detail/listener_set.hpp"
#include "cudakit/memory/out_of_memory_observer.hpp"

namespace cudakit::memory::detail {

class [[gnu::visibility("hidden")]] OomObservers {
 public:
  // @throws InvalidArgumentError for an empty function.
  std::uint64_t attach(OutOfMemoryObserver observer);
  // After it returns, the observer is not called again (from inside an observer: after that
  // call). @throws InvalidArgumentError for an id that is not attached.
  void detach(std::uint64_t id);
  // Calls the observers (no allocator lock may be held) with `info` and `report`; what they
  // throw is added to `report`. An allocation that fails inside an observer notifies no one:
  // an observer that allocates must not recurse into itself.
  void notify(OutOfMemoryInfo& info, std::string& report) const;

 private:
  cudakit::detail::ListenerSet<OutOfMemoryObserver> observers_;
};

}  // namespace cudakit::memory::detail
