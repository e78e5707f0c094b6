#include "memory/detail/oom_observers.hpp"

#include <climits>
#include <exception>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/error.hpp"

namespace cudakit::memory::detail {

std::uint64_t OomObservers::attach(OutOfMemoryObserver observer) {
  if (!observer) throw InvalidArgumentError("CachingAllocator::attach_oom_observer", "the observer is an empty function");
  return static_cast<std::uint64_t>(observers_.add(std::move(observer)));
}

void OomObservers::detach(std::uint64_t id) {
  // ListenerSet's ids are ints from 1; any other id names no observer.
  const bool known = id >= 1 && id <= static_cast<std::uint64_t>(INT_MAX);
  if (!known || observers_.remove(static_cast<int>(id)) == nullptr) {
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
  const std::string message = report;  // observers see the report without each other's failures
  info.report = message;
  observers_.for_each([&](const OutOfMemoryObserver& observe) {
    try {
      observe(info);
    } catch (const std::exception& e) {
      report += cudakit::detail::concat(" An out-of-memory observer threw: ", e.what());
    } catch (...) {
      report += " An out-of-memory observer threw an exception that is not a std::exception.";
    }
  });
}

}  // namespace cudakit::memory::detail
