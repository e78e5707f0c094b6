#include "profiler/detail/activity_collector.hpp"

#include <algorithm>
#include <atomic>

#include "cudakit/core/cupti_hub.hpp"
#include "profiler/detail/activity_records.hpp"

namespace cudakit::profiler::detail {

ActivityCollector::ActivityCollector(std::uint32_t process_id) { events_.process_id = process_id; }

void ActivityCollector::open_window(std::uint64_t start_ns) {
  std::lock_guard lock(mutex_);
  window_start_ns_ = start_ns;
}

const std::string& ActivityCollector::kernel_name(const char* mangled) {
  std::string key = mangled != nullptr ? mangled : "";
  auto it = demangled_.find(key);
  if (it == demangled_.end()) it = demangled_.emplace(std::move(key), demangle(mangled)).first;
  return it->second;
}

const std::string& ActivityCollector::runtime_name(CUpti_CallbackId id) {
  auto it = runtime_names_.find(id);
  if (it == runtime_names_.end())
    it = runtime_names_
             .emplace(id, api_name(CuptiHub::instance().callback_name(CUPTI_CB_DOMAIN_RUNTIME_API, id)))
             .first;
  return it->second;
}

void ActivityCollector::on_record(const CUpti_Activity& record) {
  std::lock_guard lock(mutex_);
  // Every record kind we take has start right after the fields below; reading it through the
  // concrete type keeps to the layout CUPTI documents.
  switch (record.kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const auto& r = reinterpret_cast<const CUpti_ActivityKernel10&>(record);
      if (r.start < window_start_ns_) return;
      events_.kernels.push_back(kernel_event(r, kernel_name(r.name)));
      device_of_context_.emplace(r.contextId, r.deviceId);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto& r = reinterpret_cast<const CUpti_ActivityMemcpy6&>(record);
      if (r.start < window_start_ns_) return;
      events_.memory_ops.push_back(memcpy_event(r));
      device_of_context_.emplace(r.contextId, r.deviceId);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
      const auto& r = reinterpret_cast<const CUpti_ActivityMemset4&>(record);
      if (r.start < window_start_ns_) return;
      events_.memory_ops.push_back(memset_event(r));
      device_of_context_.emplace(r.contextId, r.deviceId);
      break;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME: {
      const auto& r = reinterpret_cast<const CUpti_ActivityAPI&>(record);
      if (r.start < window_start_ns_) return;
      events_.runtime.push_back(runtime_event(r, runtime_name(r.cbid)));
      break;
    }
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
      const auto& r = reinterpret_cast<const CUpti_ActivitySynchronization2&>(record);
      if (r.start < window_start_ns_) return;
      events_.syncs.push_back(sync_event(r));
      sync_contexts_.push_back(r.contextId);
      break;
    }
    default: break;
  }
}

void ActivityCollector::add_range(RangeEvent range) {
  std::lock_guard lock(mutex_);
  if (range.start_ns < window_start_ns_) return;
  events_.ranges.push_back(std::move(range));
}

void ActivityCollector::finish() {
  std::lock_guard lock(mutex_);
  for (std::size_t i = 0; i < events_.syncs.size() && i < sync_contexts_.size(); ++i) {
    const auto it = device_of_context_.find(sync_contexts_[i]);
    if (it != device_of_context_.end()) events_.syncs[i].device = it->second;
  }
  // Host rows read best in time order; CUPTI delivers per buffer, not globally sorted.
  auto by_start = [](const auto& a, const auto& b) { return a.start_ns < b.start_ns; };
  std::stable_sort(events_.kernels.begin(), events_.kernels.end(), by_start);
  std::stable_sort(events_.memory_ops.begin(), events_.memory_ops.end(), by_start);
  std::stable_sort(events_.runtime.begin(), events_.runtime.end(), by_start);
  std::stable_sort(events_.ranges.begin(), events_.ranges.end(), by_start);
}

void ActivityCollector::clear() {
  std::lock_guard lock(mutex_);
  const std::uint32_t pid = events_.process_id;
  events_ = TraceEvents{};
  events_.process_id = pid;
  sync_contexts_.clear();
}

// --- the running collectors ---

namespace {

std::mutex g_running_mutex;
std::vector<std::shared_ptr<ActivityCollector>> g_running;
std::atomic<int> g_running_count{0};

}  // namespace

void register_running(std::shared_ptr<ActivityCollector> collector) {
  std::lock_guard lock(g_running_mutex);
  g_running.push_back(std::move(collector));
  g_running_count.store(static_cast<int>(g_running.size()), std::memory_order_release);
}

void unregister_running(const ActivityCollector* collector) {
  std::lock_guard lock(g_running_mutex);
  std::erase_if(g_running, [&](const auto& c) { return c.get() == collector; });
  g_running_count.store(static_cast<int>(g_running.size()), std::memory_order_release);
}

bool any_running() noexcept { return g_running_count.load(std::memory_order_acquire) > 0; }

void add_range_to_running(const RangeEvent& range) {
  std::lock_guard lock(g_running_mutex);
  for (const auto& collector : g_running) collector->add_range(range);
}

}  // namespace cudakit::profiler::detail
