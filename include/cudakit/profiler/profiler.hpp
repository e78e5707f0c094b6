#pragma once
// @brief Profiler: CUPTI activity tracing of a region of a program, torch.profiler.profile() for
// C++.
//
//   cudakit::profiler::Profiler prof;            // starts recording
//   graph.replay();
//   prof.stop();                                 // waits for the device, collects records
//   prof.export_chrome_trace("trace.json", &annotations);
//   std::cout << prof.key_averages_table();
//
// Records kernels, memcpys, memsets, runtime API calls, synchronizations (see TraceEvents) and
// record_function ranges and NVTX ranges (cudakit::nvtx, through the trace hooks), through the process's CuptiHub, so it runs alongside graph kernel
// annotations and other hub listeners. Several profilers may run at once; each gets every
// record made while it runs. Not thread-safe itself: start/stop/export from one thread.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cudakit/graphs/kernel_annotations.hpp"
#include "cudakit/profiler/key_averages.hpp"
#include "cudakit/profiler/trace_events.hpp"

namespace cudakit::profiler {

namespace detail {
class ActivityCollector;  // the event store CUPTI's thread appends to (src/profiler/detail)
class RangeRecorder;      // NVTX ranges from the trace hooks (src/profiler/detail)
}

// Which CUPTI activity kinds a Profiler records.
struct ProfilerOptions {
  bool kernels = true;          // CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL
  bool memory_ops = true;       // CUPTI_ACTIVITY_KIND_MEMCPY and _MEMSET
  bool runtime = true;          // CUPTI_ACTIVITY_KIND_RUNTIME (needed for launch->kernel flows)
  bool synchronization = true;  // CUPTI_ACTIVITY_KIND_SYNCHRONIZATION
};

// Records the device activity (and host ranges) of a region of the program through CUPTI, for
// export as a Chrome trace or a summary table. Neither copyable nor movable; use it from one
// thread.
class Profiler {
 public:
  // Starts recording at once when `start_now`.
  // @param options which activity kinds to record.
  // @param start_now whether to call start() now.
  // @throws StateError as start().
  explicit Profiler(ProfilerOptions options = {}, bool start_now = true);
  // Stops if running; never throws.
  ~Profiler();
  // Not copyable: a Profiler owns its CUPTI listener.
  Profiler(const Profiler&) = delete;
  // Not copyable: a Profiler owns its CUPTI listener.
  Profiler& operator=(const Profiler&) = delete;

  // Begins recording; events of an earlier start/stop are kept and added to.
  // @throws StateError when already running, or when CUPTI is unavailable (the message says
  //         why: libcupti missing, another CUPTI subscriber such as Nsight, no driver).
  void start();
  // Waits for all work on the device (cudaDeviceSynchronize, as torch.profiler does on exit) so
  // that everything launched while recording is delivered, then stops. No-op when not running.
  // Blocks the host: every visible device is synchronized in turn (a failure there is left for
  // the next CUDA call to report), then CUPTI's buffers are flushed. Never throws.
  void stop();
  // @return true between start() and stop().
  [[nodiscard]] bool is_running() const noexcept { return running_; }

  // What was recorded (complete after stop()).
  // @return the events; the reference is valid until clear() or the Profiler's end.
  [[nodiscard]] const TraceEvents& events() const;
  // Drops everything recorded so far.
  void clear();

  // See chrome_trace_json() for the format and the annotation merge rules.
  // @param path the file to write (replaced whole).
  // @param annotations graph kernel annotations to merge, or null for none.
  // @throws StateError while running.
  // @throws FileError when `path` cannot be written.
  void export_chrome_trace(const std::string& path,
                           const graphs::KernelAnnotations* annotations = nullptr) const;
  // GPU time per operation name of what was recorded (the free key_averages()).
  // @return one row per name, largest total first.
  [[nodiscard]] std::vector<KeyAverage> key_averages() const;
  // key_averages() as a text table (the free key_averages_table()).
  // @param row_limit the most rows printed; 0 for all.
  // @return the table.
  [[nodiscard]] std::string key_averages_table(std::size_t row_limit = 0) const;

 private:
  ProfilerOptions options_;
  std::shared_ptr<detail::ActivityCollector> collector_;
  int listener_ = -1;
  std::shared_ptr<detail::RangeRecorder> ranges_;
  std::uint64_t range_listener_ = 0;
  bool running_ = false;
};

}  // namespace cudakit::profiler
