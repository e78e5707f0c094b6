#include "memory/detail/tracked_backend.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <thread>

#include "cudakit/core/capture_hook.hpp"
#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/device.hpp"
#include "cudakit/core/device_guard.hpp"
#include "cudakit/core/error.hpp"
#include "memory/detail/format_bytes.hpp"

namespace cudakit::memory::detail {
namespace {

constexpr std::size_t kSmallRequest = std::size_t{1} << 20;  // the caching allocator's small pool

// Counts the graph layer's captures per device. A failed capture_end is followed by
// capture_abort on the same thread: that abort undoes nothing more (the end already counted).
class CaptureCounter final : public CaptureHook {
 public:
  void capture_begin(int device) override {
    t_ended_device = -1;
    counts_[slot(device)].fetch_add(1, std::memory_order_relaxed);
  }
  std::uint64_t capture_end(int device, StreamRef) override {
    decrement(device);
    t_ended_device = device;
    return 0;
  }
  void capture_abort(int device) noexcept override {
    if (t_ended_device == device) {
      t_ended_device = -1;
      return;
    }
    decrement(device);
  }
  void replay(int, std::uint64_t, StreamRef) override {}  // capture_end returned 0: never called
  int count(int device) const noexcept { return counts_[slot(device)].load(std::memory_order_relaxed); }

 private:
  static std::size_t slot(int device) noexcept {
    return static_cast<std::size_t>(std::clamp(device, 0, kMaxDevices - 1));
  }
  void decrement(int device) noexcept {
    auto& c = counts_[slot(device)];
    int v = c.load(std::memory_order_relaxed);
    while (v > 0 && !c.compare_exchange_weak(v, v - 1, std::memory_order_relaxed)) {
    }
  }
  static thread_local int t_ended_device;
  std::array<std::atomic<int>, kMaxDevices> counts_{};
};
thread_local int CaptureCounter::t_ended_device = -1;

CaptureCounter& capture_counter() {
  // Registered at load time, before any capture can begin, so that every begin is counted; never
  // destroyed, as hooks are called until exit.
  static CaptureCounter* counter = [] {
    auto* c = new CaptureCounter;
    register_capture_hook(c);
    return c;
  }();
  return *counter;
}
[[maybe_unused]] const bool kCaptureCounterRegistered = (capture_counter(), true);

// The counters of `stats` that an allocation of `bytes` moves: all, and its size class.
template <class F>
void for_pools(std::size_t bytes, F&& f) {
  f(static_cast<std::size_t>(StatPool::all));
  f(static_cast<std::size_t>(bytes <= kSmallRequest ? StatPool::small_pool : StatPool::large_pool));
}

void reset_peaks(StatArray& a) noexcept {
  for (Stat& s : a) s.peak = s.current;
}
void reset_totals(StatArray& a) noexcept {
  for (Stat& s : a) s.allocated = s.freed = 0;
}
template <class F>
void for_each_array(MemoryStats& m, F&& f) {
  for (StatArray* a : {&m.allocation, &m.segment, &m.active, &m.inactive_split, &m.allocated_bytes,
                       &m.reserved_bytes, &m.active_bytes, &m.inactive_split_bytes, &m.requested_bytes}) {
    f(*a);
  }
}

}  // namespace

int captures_under_way(int device) noexcept { return capture_counter().count(device); }

bool caching_disabled_by(std::string_view value) {
  if (value == "1") return true;
  if (value == "0" || value.empty()) return false;
  throw InvalidArgumentError("CUDAKIT_NO_CUDA_MEMORY_CACHING",
                             cudakit::detail::concat("'", value, "': expected 1 (caching off) or 0"));
}


void TrackedBackend::check_device(int device, const char* api) {
  if (device < 0 || device >= kMaxDevices) {
    throw InvalidArgumentError(api, cudakit::detail::concat("device ordinal ", device,
                                                            " is out of range 0..", kMaxDevices - 1));
  }
}

void* TrackedBackend::allocate(std::size_t bytes, StreamRef stream) {
  const int device = stream.device();
  check_device(device, "allocate");
  release_deferred();
  if (bytes == 0) return nullptr;
  {
    std::lock_guard lock(mutex_);
    DeviceState& d = devices_[static_cast<std::size_t>(device)];
    const auto held = static_cast<std::size_t>(d.stats.allocated_bytes[0].current);
    if (bytes > d.limit || held > d.limit - bytes) {
      ++d.stats.num_ooms;
      throw OutOfMemoryError(
          "allocate",
          cudakit::detail::concat("CUDA out of memory. The ", name(), " allocator cannot allocate ", format_bytes(bytes),
                                  " on device ", device, ": ", format_bytes(held),
                                  " is allocated and the per-process memory fraction ", d.fraction,
                                  " allows ", format_bytes(d.limit), device_memory_report(device)),
          bytes);
    }
  }
  void* ptr = obtain(bytes, device, stream);
  std::lock_guard lock(mutex_);
  DeviceState& d = devices_[static_cast<std::size_t>(device)];
  if (!ptr) {
    ++d.stats.num_ooms;
    throw OutOfMemoryError(
        "allocate",
        cudakit::detail::concat("CUDA out of memory. Tried to allocate ", format_bytes(bytes), ": the ", name(),
                                " allocator is out of memory on device ", device, "; cudakit holds ",
                                format_bytes(static_cast<std::size_t>(d.stats.allocated_bytes[0].current)),
                                " in ", d.stats.allocation[0].current, " allocations from it",
                                device_memory_report(device)),
        bytes);
  }
  const auto n = static_cast<std::int64_t>(bytes);
  for_pools(bytes, [&](std::size_t i) {
    MemoryStats& m = d.stats;
    m.allocation[i].increase(1);
    m.active[i].increase(1);
    m.segment[i].increase(1);
    m.allocated_bytes[i].increase(n);
    m.active_bytes[i].increase(n);
    m.requested_bytes[i].increase(n);
    m.reserved_bytes[i].increase(n);
  });
  ++d.stats.num_device_alloc;
  live_.emplace(ptr, Allocation{.bytes = bytes, .device = device, .stream = stream, .usage = {}});
  return ptr;
}

bool TrackedBackend::deallocate_if_owned(void* ptr) {
  Allocation a;
  {
    std::lock_guard lock(mutex_);
    auto it = live_.find(ptr);
    if (it == live_.end()) return false;
    a = std::move(it->second);
    live_.erase(it);
    const auto n = static_cast<std::int64_t>(a.bytes);
    for_pools(a.bytes, [&](std::size_t i) {
      MemoryStats& m = devices_[static_cast<std::size_t>(a.device)].stats;
      m.allocation[i].decrease(1);
      m.active[i].decrease(1);
      m.allocated_bytes[i].decrease(n);
      m.active_bytes[i].decrease(n);
      m.requested_bytes[i].decrease(n);
    });
  }
  if (must_defer(a)) {
    std::lock_guard lock(mutex_);
    deferred_.emplace_back(ptr, std::move(a));
    return true;
  }
  release_deferred();
  release_now(ptr, a);
  return true;
}

bool TrackedBackend::must_defer(const Allocation& a) {
  if (!defers_during_capture()) return false;
  if (captures_under_way(a.device) > 0) return true;
  if (!releases_on_streams()) return false;
  // A capture begun with raw CUDA calls is seen on the streams themselves.
  for (const StreamRef& s : all_streams(a)) {
    if (events(s.device()).capturing(reinterpret_cast<StreamKey>(s.handle()))) return true;
  }
  return false;
}

void TrackedBackend::release_deferred() {
  std::vector<std::pair<void*, Allocation>> ready;
  {
    std::lock_guard lock(mutex_);
    if (deferred_.empty()) return;
    ready.swap(deferred_);
  }
  std::vector<std::pair<void*, Allocation>> still;
  for (auto& [ptr, a] : ready) {
    if (must_defer(a)) {
      still.emplace_back(ptr, std::move(a));
    } else {
      release_now(ptr, a);
    }
  }
  if (!still.empty()) {
    std::lock_guard lock(mutex_);
    deferred_.insert(deferred_.end(), std::make_move_iterator(still.begin()),
                     std::make_move_iterator(still.end()));
  }
}

void TrackedBackend::release_now(void* ptr, const Allocation& a) {
  release(ptr, a);
  count_release(a.device, a.bytes);
}

void TrackedBackend::count_release(int device, std::size_t bytes) {
  std::lock_guard lock(mutex_);
  MemoryStats& m = devices_[static_cast<std::size_t>(device)].stats;
  for_pools(bytes, [&](std::size_t i) {
    m.segment[i].decrease(1);
    m.reserved_bytes[i].decrease(static_cast<std::int64_t>(bytes));
  });
  ++m.num_device_free;
}

bool TrackedBackend::record_stream_if_owned(void* ptr, StreamRef stream) {
  {
    std::lock_guard lock(mutex_);
    auto it = live_.find(ptr);
    if (it == live_.end()) return false;
    // The allocating stream orders the free by itself (torch warns and ignores it too).
    if (it->second.stream == stream) return true;
  }
  if (!keep_usage_stream(ptr, stream)) return true;
  std::lock_guard lock(mutex_);
  auto it = live_.find(ptr);
  if (it == live_.end()) return true;  // freed meanwhile by another thread: nothing to order
  auto& usage = it->second.usage;
  if (std::find(usage.begin(), usage.end(), stream) == usage.end()) usage.push_back(stream);
  return true;
}

std::optional<LiveAllocation> TrackedBackend::find(const void* ptr) const {
  std::lock_guard lock(mutex_);
  auto it = live_.find(const_cast<void*>(ptr));
  if (it == live_.end()) return std::nullopt;
  return LiveAllocation{.device = it->second.device, .bytes = it->second.bytes};
}

MemoryStats TrackedBackend::stats(int device) const {
  check_device(device, "memory_stats");
  std::lock_guard lock(mutex_);
  return devices_[static_cast<std::size_t>(device)].stats;
}

void TrackedBackend::reset_peak_stats(int device) {
  check_device(device, "reset_peak_memory_stats");
  std::lock_guard lock(mutex_);
  MemoryStats& m = devices_[static_cast<std::size_t>(device)].stats;
  for_each_array(m, reset_peaks);
}

void TrackedBackend::reset_accumulated_stats(int device) {
  check_device(device, "reset_accumulated_memory_stats");
  std::lock_guard lock(mutex_);
  MemoryStats& m = devices_[static_cast<std::size_t>(device)].stats;
  for_each_array(m, reset_totals);
  m.num_alloc_retries = m.num_ooms = m.num_sync_all_streams = 0;
  m.num_device_alloc = m.num_device_free = 0;
}

void TrackedBackend::empty_cache() {
  release_deferred();
  trim();
}

void TrackedBackend::set_memory_fraction(double fraction, int device) {
  check_device(device, "set_per_process_memory_fraction");
  if (!(fraction > 0.0 && fraction <= 1.0)) {
    throw InvalidArgumentError("set_per_process_memory_fraction",
                               cudakit::detail::concat("fraction ", fraction, " must lie in (0, 1]"));
  }
  const std::size_t limit = fraction == 1.0
                                ? static_cast<std::size_t>(-1)
                                : static_cast<std::size_t>(fraction * static_cast<double>(total_memory(device)));
  std::lock_guard lock(mutex_);
  devices_[static_cast<std::size_t>(device)].fraction = fraction;
  devices_[static_cast<std::size_t>(device)].limit = limit;
}

double TrackedBackend::memory_fraction(int device) const {
  check_device(device, "get_per_process_memory_fraction");
  std::lock_guard lock(mutex_);
  return devices_[static_cast<std::size_t>(device)].fraction;
}

std::size_t TrackedBackend::total_memory(int device) const { return mem_get_info(device).second; }

std::string TrackedBackend::device_memory_report(int device) const {
  const auto [free, total] = mem_get_info(device);
  return cudakit::detail::concat("; the device has ", format_bytes(free), " free of ", format_bytes(total));
}

std::string TrackedBackend::summary(int device) const {
  return format_memory_summary(stats(device), device, settings());
}

MemorySnapshot TrackedBackend::snapshot(int device) const {
  MemorySnapshot out;
  out.device = device;
  out.stats = stats(device);
  out.config = config_;
  // Each allocation is a segment of its own (it is one call to the underlying allocator): one
  // block, allocated, or pending while its free waits for a capture to end.
  auto add_segment = [&](void* ptr, const Allocation& a, BlockSnapshot::State state) {
    if (a.device != device) return;
    const auto address = reinterpret_cast<std::uintptr_t>(ptr);
    const bool allocated = state == BlockSnapshot::State::active_allocated;
    SegmentSnapshot s{.device = device, .address = address, .total_size = a.bytes,
                      .allocated_size = allocated ? a.bytes : 0, .active_size = a.bytes,
                      .requested_size = allocated ? a.bytes : 0,
                      .stream = reinterpret_cast<StreamKey>(a.stream.handle()),
                      .is_small = a.bytes <= kSmallRequest, .is_expandable = false, .pool = {}, .blocks = {}};
    s.blocks.push_back({.address = address, .size = a.bytes, .requested_size = a.bytes, .state = state, .frames = {}});
    out.segments.push_back(std::move(s));
  };
  std::lock_guard lock(mutex_);
  for (const auto& [ptr, a] : live_) add_segment(ptr, a, BlockSnapshot::State::active_allocated);
  for (const auto& [ptr, a] : deferred_) add_segment(ptr, a, BlockSnapshot::State::active_pending_free);
  std::sort(out.segments.begin(), out.segments.end(),
            [](const SegmentSnapshot& x, const SegmentSnapshot& y) { return x.address < y.address; });
  return out;
}

CudaStreamEvents& TrackedBackend::events(int device) {
  check_device(device, "record_stream");
  std::lock_guard lock(events_mutex_);
  auto& slot = events_[static_cast<std::size_t>(device)];
  if (!slot) slot = std::make_unique<CudaStreamEvents>(device);
  return *slot;
}

std::vector<StreamRef> TrackedBackend::all_streams(const Allocation& a) {
  std::vector<StreamRef> out{a.stream};
  out.insert(out.end(), a.usage.begin(), a.usage.end());
  return out;
}

void TrackedBackend::order_after(StreamRef target, std::span<const StreamRef> streams) {
  for (const StreamRef& s : streams) {
    if (s == target) continue;
    CudaStreamEvents& e = events(s.device());
    StreamEvents::Token token = 0;
    {
      // A null handle is the legacy default stream of the current device: each call runs with
      // its stream's device current.
      DeviceGuard guard(s.device());
      token = e.record(reinterpret_cast<StreamKey>(s.handle()));
    }
    cudaError_t waited = cudaSuccess;
    {
      DeviceGuard guard(target.device());
      waited = cudaStreamWaitEvent(target.handle(), reinterpret_cast<cudaEvent_t>(token), 0);
    }
    e.release(token);  // the wait took the event's state; the event may be recorded again
    CUDAKIT_CHECK_CUDA(waited);
  }
}

}  // namespace cudakit::memory::detail
