#pragma once
// RangeRecorder: turns the NVTX ranges the trace hooks report (range_push/pop/start/end, from the
// nvtx layer, which sits above the profiler) into RangeEvents on the host timeline of a running
// Profiler. The profiler attaches one as a trace listener while it runs; the clock and the sink
// are given, so the bookkeeping is tested on the host with synthetic events.

#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "cudakit/core/trace_event.hpp"
#include "cudakit/profiler/trace_events.hpp"

namespace cudakit::profiler::detail {

class RangeRecorder {
 public:
  using Clock = std::function<std::uint64_t()>;
  using Sink = std::function<void(RangeEvent)>;
  RangeRecorder(Clock clock, Sink sink) : clock_(std::move(clock)), sink_(std::move(sink)) {}

  // Called with every trace event; ignores all but the four range kinds. `thread` is the
  // reporting thread's id (the listener runs on it). A pop with nothing open (the range began
  // before the profiler started) and an end of an unknown id are dropped.
  void on_event(const TraceEvent& event, std::uint32_t thread);

 private:
  struct Open {
    std::string name;
    std::uint64_t start_ns;
  };
  Clock clock_;
  Sink sink_;
  std::mutex mutex_;
  std::unordered_map<std::uint32_t, std::vector<Open>> stacks_;  // per thread
  std::unordered_map<std::uint64_t, Open> started_;               // range_start ids
};

}  // namespace cudakit::profiler::detail
