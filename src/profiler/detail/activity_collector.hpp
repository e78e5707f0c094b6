#pragma once
// ActivityCollector: one Profiler's event store. CUPTI's buffer thread appends converted records
// (on_record), threads ending a record_function range append ranges (add_range), and the
// profiler reads the result after stopping. Shared (shared_ptr) between the profiler, its hub
// listener and the registry of running collectors, so none outlives what it points to.

#include <cupti.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "cudakit/profiler/trace_events.hpp"

namespace cudakit::profiler::detail {

class ActivityCollector {
 public:
  explicit ActivityCollector(std::uint32_t process_id);

  // Records that started before `start_ns` are ignored: buffers CUPTI completes after start()
  // may still hold activity another listener enabled earlier.
  void open_window(std::uint64_t start_ns);
  void on_record(const CUpti_Activity& record);
  void add_range(RangeEvent range);
  // Fills in what only the whole recording knows (the device of synchronizations, from the
  // contexts of device records). Call once no more records arrive.
  void finish();

  // Not synchronized: for the owning profiler, once it has stopped.
  [[nodiscard]] const TraceEvents& events() const { return events_; }
  void clear();

 private:
  const std::string& kernel_name(const char* mangled);
  const std::string& runtime_name(CUpti_CallbackId id);

  std::mutex mutex_;
  TraceEvents events_;
  std::uint64_t window_start_ns_ = 0;
  std::unordered_map<std::string, std::string> demangled_;
  std::unordered_map<CUpti_CallbackId, std::string> runtime_names_;
  std::unordered_map<std::uint32_t, std::uint32_t> device_of_context_;
  std::vector<std::uint32_t> sync_contexts_;  // parallel to events_.syncs
};

// Collectors of the running profilers, which record_function ranges go to.
void register_running(std::shared_ptr<ActivityCollector> collector);
void unregister_running(const ActivityCollector* collector);
// Cheap check (one atomic load) for record_function's constructor.
[[nodiscard]] bool any_running() noexcept;
void add_range_to_running(const RangeEvent& range);

}  // namespace cudakit::profiler::detail
