#include "memory/detail/oom_observers.hpp"

#include <exception>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/error.hpp"

namespace cudakit::memory::detail {

std::uint64_t OomObservers::attach(OutOfMemoryObserver observer) {
  if (!observer) throw InvalidArgumentError("CachingAllocator::attach_oom_observer", "the observer is an empty function");
  std::lock_guard lock(mutex_);
  const std::uint64_t id = next_id_++;
  observers_.emplace_back(id, std::move(observer));
  return id;
}

void OomObservers::detach(std::uint64_t id) {
  std::lock_guard lock(mutex_);
  if (std::erase_if(observers_, [&](const auto& entry) { return entry.first == id; }) == 0) {
    throw InvalidArgumentError("CachingAllocator::detach_oom_observer",
                               cudakit::detail::concat("no out-of-memory observer is attached with id ", id));
  }
}

void OomObservers::notify(OutOfMemoryInfo& info, std::string& report) const {
  thread_local bool t_notifying = false;
  if (t_notifying) return;
  struct Scope {
    Scope() { t_notifying = true; }
    ~Scope() { t_notifying = false; }
  } scope;
  std::vector<OutOfMemoryObserver> observers;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [id, observer] : observers_) observers.push_back(observer);
  }
  const std::string message = report;  // observers see the report without each other's failures
  info.report = message;
  for (const OutOfMemoryObserver& observe : observers) {
    try {
      observe(info);
    } catch (const std::exception& e) {
      report += cudakit::detail::concat(" An out-of-memory observer threw: ", e.what());
    } catch (...) {
      report += " An out-of-memory observer threw an exception that is not a std::exception.";
    }
  }
}

}  // namespace cudakit::memory::detail
