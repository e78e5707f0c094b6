#include "cudakit/profiler/profiler.hpp"

#include <cuda_runtime_api.h>
#include <unistd.h>

#include "cudakit/core/cupti_hub.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/profiler/chrome_trace.hpp"
#include "cudakit/core/trace_hooks.hpp"
#include "profiler/detail/activity_collector.hpp"
#include "profiler/detail/range_recorder.hpp"

namespace cudakit::profiler {
namespace {

std::vector<CUpti_ActivityKind> activity_kinds(const ProfilerOptions& options) {
  std::vector<CUpti_ActivityKind> kinds;
  if (options.kernels) kinds.push_back(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  if (options.memory_ops) {
    kinds.push_back(CUPTI_ACTIVITY_KIND_MEMCPY);
    kinds.push_back(CUPTI_ACTIVITY_KIND_MEMSET);
  }
  if (options.runtime) kinds.push_back(CUPTI_ACTIVITY_KIND_RUNTIME);
  if (options.synchronization) kinds.push_back(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
  return kinds;
}

// Waits for every device, so that all work launched while recording has finished and its
// records can be flushed; failures (no device, a sticky error) are left to the next CUDA call.
void synchronize_all_devices() noexcept {
  int count = 0;
  int current = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || cudaGetDevice(&current) != cudaSuccess) {
    (void)cudaGetLastError();
    return;
  }
  for (int d = 0; d < count; ++d) {
    if (cudaSetDevice(d) == cudaSuccess) (void)cudaDeviceSynchronize();
  }
  (void)cudaSetDevice(current);
  (void)cudaGetLastError();
}

}  // namespace

Profiler::Profiler(ProfilerOptions options, bool start_now)
    : options_(options),
      collector_(std::make_shared<detail::ActivityCollector>(static_cast<std::uint32_t>(::getpid()))) {
  if (start_now) start();
}

Profiler::~Profiler() {
  try {
    stop();
  } catch (...) {
    // stop() does not throw today; a destructor must not let anything out regardless.
  }
}

void Profiler::start() {
  if (running_) throw StateError("Profiler::start", "the profiler is already running");
  CuptiHub& hub = CuptiHub::instance();
  if (!hub.available())
    throw StateError("Profiler::start", std::string("CUPTI is unavailable: ") + hub.reason());
  collector_->open_window(hub.timestamp());
  std::shared_ptr<detail::ActivityCollector> collector = collector_;
  listener_ = hub.add_activity_listener(
      activity_kinds(options_),
      [collector](const CUpti_Activity& record) { collector->on_record(record); });
  // NVTX ranges reach the profiler through the trace hooks (the nvtx layer sits above it).
  ranges_ = std::make_shared<detail::RangeRecorder>([] { return CuptiHub::instance().timestamp(); },
                                                    [collector](RangeEvent r) { collector->add_range(std::move(r)); });
  range_listener_ = attach_trace_listener([ranges = ranges_](const TraceEvent& e) {
    ranges->on_event(e, CuptiHub::current_thread_id());
  });
  detail::register_running(collector_);
  running_ = true;
}

void Profiler::stop() {
  if (!running_) return;
  synchronize_all_devices();
  CuptiHub& hub = CuptiHub::instance();
  hub.flush();
  hub.remove_activity_listener(listener_);
  detach_trace_listener(range_listener_);
  ranges_.reset();
  detail::unregister_running(collector_.get());
  listener_ = -1;
  running_ = false;
  collector_->finish();
}

const TraceEvents& Profiler::events() const { return collector_->events(); }

void Profiler::clear() { collector_->clear(); }

void Profiler::export_chrome_trace(const std::string& path,
                                   const graphs::KernelAnnotations* annotations) const {
  if (running_)
    throw StateError("Profiler::export_chrome_trace", "stop() the profiler before exporting");
  write_chrome_trace(path, events(), annotations);
}

std::vector<KeyAverage> Profiler::key_averages() const {
  return profiler::key_averages(events());
}

std::string Profiler::key_averages_table(std::size_t row_limit) const {
  return profiler::key_averages_table(key_averages(), row_limit);
}

}  // namespace cudakit::profiler
