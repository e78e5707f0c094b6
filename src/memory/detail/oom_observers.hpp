#pragma once
// OomObservers: the functions an allocator calls before it throws OutOfMemoryError
// (CachingAllocator::attach_oom_observer).

#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "cudakit/memory/out_of_memory_observer.hpp"

namespace cudakit::memory::detail {

class [[gnu::visibility("hidden")]] OomObservers {
 public:
  // @throws InvalidArgumentError for an empty function.
  std::uint64_t attach(OutOfMemoryObserver observer);
  // @throws InvalidArgumentError for an id that is not attached.
  void detach(std::uint64_t id);
  // Calls the observers (no allocator lock may be held) with `info` and `report`; what they
  // throw is added to `report`. An allocation that fails inside an observer notifies no one:
  // an observer that allocates must not recurse into itself.
  void notify(OutOfMemoryInfo& info, std::string& report) const;

 private:
  mutable std::mutex mutex_;
  std::vector<std::pair<std::uint64_t, OutOfMemoryObserver>> observers_;
  std::uint64_t next_id_ = 1;
};

}  // namespace cudakit::memory::detail
