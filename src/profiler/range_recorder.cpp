#include "profiler/detail/range_recorder.hpp"

namespace cudakit::profiler::detail {

void RangeRecorder::on_event(const TraceEvent& event, std::uint32_t thread) {
  switch (event.kind) {
    case TraceEventKind::range_push: {
      const std::uint64_t now = clock_();
      std::lock_guard lock(mutex_);
      stacks_[thread].push_back({event.name ? event.name : "", now});
      return;
    }
    case TraceEventKind::range_start: {
      const std::uint64_t now = clock_();
      std::lock_guard lock(mutex_);
      started_[event.range_id] = {event.name ? event.name : "", now};
      return;
    }
    case TraceEventKind::range_pop: {
      const std::uint64_t now = clock_();
      Open open;
      {
        std::lock_guard lock(mutex_);
        auto it = stacks_.find(thread);
        if (it == stacks_.end() || it->second.empty()) return;
        open = std::move(it->second.back());
        it->second.pop_back();
      }
      sink_(RangeEvent{std::move(open.name), open.start_ns, now, thread});
      return;
    }
    case TraceEventKind::range_end: {
      const std::uint64_t now = clock_();
      Open open;
      {
        std::lock_guard lock(mutex_);
        auto it = started_.find(event.range_id);
        if (it == started_.end()) return;
        open = std::move(it->second);
        started_.erase(it);
      }
      sink_(RangeEvent{std::move(open.name), open.start_ns, now, thread});
      return;
    }
    default: return;
  }
}

}  // namespace cudakit::profiler::detail
