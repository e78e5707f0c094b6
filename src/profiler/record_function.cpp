#include "cudakit/profiler/record_function.hpp"

#include "cudakit/core/cupti_hub.hpp"
#include "profiler/detail/activity_collector.hpp"

namespace cudakit::profiler {

RecordFunction::RecordFunction(std::string name) : name_(std::move(name)) {
  if (!detail::any_running()) return;
  active_ = true;
  start_ns_ = CuptiHub::instance().timestamp();
}

RecordFunction::~RecordFunction() {
  if (!active_) return;
  try {
    const std::uint64_t end_ns = CuptiHub::instance().timestamp();
    detail::add_range_to_running(
        RangeEvent{std::move(name_), start_ns_, end_ns, CuptiHub::current_thread_id()});
  } catch (...) {
    // A range that cannot be stored (out of memory) is dropped: destructors never throw.
  }
}

}  // namespace cudakit::profiler
