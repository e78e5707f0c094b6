#include "cudakit/memory/device_allocator.hpp"

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/device.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/core/log.hpp"
#include "cudakit/core/trace_hooks.hpp"
#include "cudakit/memory/cuda_segment_provider.hpp"
#include "cudakit/memory/mem_pool.hpp"

namespace cudakit::memory {
namespace {

constexpr int kMaxDevices = 64;

struct Registry {
  std::mutex mutex;
  std::array<std::atomic<CachingAllocator*>, kMaxDevices> allocators{};
  std::vector<std::unique_ptr<CachingAllocator>> owned;
  // The config allocators created from now on start from, once set_allocator_settings changed
  // it (under mutex).
  std::optional<AllocatorConfig> later;
};

Registry& registry() {
  // Never destroyed: allocators must outlive static objects that free memory at exit.
  static Registry* r = new Registry;
  return *r;
}

// Per thread and device: the pool allocations go to (use_mem_pool).
thread_local std::array<PoolId, kMaxDevices> t_current_pool{};

}  // namespace

CachingAllocator& device_allocator(int device) {
  device = detail::resolve_device(device, "device_allocator");
  Registry& r = registry();
  if (CachingAllocator* a = r.allocators[device].load(std::memory_order_acquire)) return *a;
  std::lock_guard lock(r.mutex);
  if (CachingAllocator* a = r.allocators[device].load()) return *a;
  const AllocatorConfig config = r.later ? *r.later : AllocatorConfig::from_environment();
  auto created = std::make_unique<CachingAllocator>(device, std::make_shared<CudaSegmentProvider>(device),
                                                    std::make_shared<CudaStreamEvents>(device), config);
  r.allocators[device].store(created.get(), std::memory_order_release);
  r.owned.push_back(std::move(created));
  return *r.owned.back();
}

PoolId current_pool(int device) { return t_current_pool[static_cast<std::size_t>(device)]; }

PoolId exchange_current_pool(int device, PoolId pool) {
  return std::exchange(t_current_pool[static_cast<std::size_t>(device)], pool);
}

namespace {
// allocate() with the trace hooks listening: out of line, so that the path without listeners
// stays a tail call into the allocator (an alloc+free pair costs ~50 ns; the report after the
// call cost a frame and a few ns on every pair).
[[gnu::noinline]] void* allocate_traced(std::size_t bytes, StreamRef stream) {
  const int device = stream.device();
  void* ptr = device_allocator(device).allocate(bytes, reinterpret_cast<StreamKey>(stream.handle()),
                                                t_current_pool[static_cast<std::size_t>(device)]);
  detail::emit_trace_event({.kind = TraceEventKind::allocation, .device = device,
                            .stream = stream.handle(), .pointer = ptr, .bytes = bytes});
  return ptr;
}
}  // namespace

void* allocate(std::size_t bytes, OptionalStream stream_arg) {
  const StreamRef stream = stream_or_current(stream_arg);
  if (trace_hooks_active()) [[unlikely]] return allocate_traced(bytes, stream);
  const int device = stream.device();
  return device_allocator(device).allocate(bytes, reinterpret_cast<StreamKey>(stream.handle()),
                                           t_current_pool[static_cast<std::size_t>(device)]);
}

namespace {
// The first existing allocator for which `pred` holds, or nullptr.
template <class Pred>
CachingAllocator* first_allocator(Pred&& pred) {
  for (auto& slot : registry().allocators) {
    CachingAllocator* a = slot.load(std::memory_order_acquire);
    if (a && pred(*a)) return a;
  }
  return nullptr;
}
CachingAllocator* owner_of(const void* ptr) {
  return first_allocator([&](CachingAllocator& a) { return a.owns(ptr); });
}
[[noreturn]] void not_ours(const char* api, const void* ptr) {
  throw InvalidArgumentError(api, detail::concat("pointer ", ptr,
                                                 " was not allocated by cudakit's device allocator"));
}
}  // namespace

CachingAllocator* device_allocator_owning(const void* ptr) noexcept { return ptr ? owner_of(ptr) : nullptr; }

void deallocate(void* ptr) {
  if (!ptr) return;
  if (trace_hooks_active()) [[unlikely]] {
    // Before the block can be reused. An unknown pointer is reported below, not here.
    if (CachingAllocator* a = owner_of(ptr)) {
      detail::emit_trace_event({.kind = TraceEventKind::free, .device = a->device(),
                                .pointer = ptr, .bytes = a->allocation_size(ptr)});
    }
  }
  // One arena lookup: the owner frees as it recognizes the pointer.
  if (!first_allocator([&](CachingAllocator& a) { return a.deallocate_if_owned(ptr); })) {
    not_ours("deallocate", ptr);
  }
}

void record_stream(void* ptr, StreamRef stream) {
  CachingAllocator* a = owner_of(ptr);
  if (!a) not_ours("record_stream", ptr);
  CUDAKIT_TRACE({.kind = TraceEventKind::record_stream, .device = a->device(),
                 .other_stream = stream.handle(), .pointer = ptr});
  a->record_stream(ptr, reinterpret_cast<StreamKey>(stream.handle()));
}

MemoryStats memory_stats(int device) { return device_allocator(device).stats(); }
NestedStats memory_stats_as_nested_dict(int device) { return memory_stats(device).to_nested(); }
std::size_t memory_allocated(int device) {
  return static_cast<std::size_t>(memory_stats(device).allocated_bytes[0].current);
}
std::size_t max_memory_allocated(int device) {
  return static_cast<std::size_t>(memory_stats(device).allocated_bytes[0].peak);
}
std::size_t memory_reserved(int device) {
  return static_cast<std::size_t>(memory_stats(device).reserved_bytes[0].current);
}
std::size_t max_memory_reserved(int device) {
  return static_cast<std::size_t>(memory_stats(device).reserved_bytes[0].peak);
}
void reset_peak_memory_stats(int device) { device_allocator(device).reset_peak_stats(); }
void reset_accumulated_memory_stats(int device) { device_allocator(device).reset_accumulated_stats(); }

void empty_cache() {
  for (auto& slot : registry().allocators) {
    if (CachingAllocator* a = slot.load(std::memory_order_acquire)) a->empty_cache();
  }
}

void set_per_process_memory_fraction(double fraction, int device) {
  device_allocator(device).set_memory_fraction(fraction);
}
double get_per_process_memory_fraction(int device) {
  return device_allocator(device).config().per_process_memory_fraction;
}

void set_allocator_settings(std::string_view settings) {
  Registry& r = registry();
  // Under the registry's mutex, so that no allocator is created between the check and the
  // change. Every allocator's new config is parsed before any is applied: a refused text
  // changes nothing anywhere.
  std::lock_guard lock(r.mutex);
  const AllocatorConfig later =
      AllocatorConfig::parse_runtime(settings, r.later ? *r.later : AllocatorConfig::from_environment());
  for (auto& a : r.owned) (void)AllocatorConfig::parse_runtime(settings, a->config());
  for (auto& a : r.owned) a->set_allocator_settings(settings);
  r.later = later;
}

std::vector<MemorySnapshot> memory_snapshot_all(bool include_traces) {
  std::vector<MemorySnapshot> out;
  for (auto& slot : registry().allocators) {
    if (CachingAllocator* a = slot.load(std::memory_order_acquire)) out.push_back(a->snapshot(include_traces));
  }
  return out;
}

std::uint64_t attach_out_of_memory_observer(OutOfMemoryObserver observer, int device) {
  return device_allocator(device).attach_oom_observer(std::move(observer));
}

std::string memory_summary(int device) { return device_allocator(device).summary(); }

// ---- MemPool ----

namespace {
class UserFunctionProvider : public SegmentProvider {
 public:
  UserFunctionProvider(UserAllocFn alloc_fn, UserFreeFn free_fn, int device)
      : alloc_(alloc_fn), free_(free_fn), device_(device), cuda_(device) {}
  std::string name() const override { return detail::concat("user allocator on cuda:", device_); }
  void* allocate_segment(std::size_t bytes, StreamKey stream) override {
    return alloc_(bytes, device_, reinterpret_cast<cudaStream_t>(stream));
  }
  void free_segment(void* p, std::size_t bytes, StreamKey stream) noexcept override {
    free_(p, bytes, device_, reinterpret_cast<cudaStream_t>(stream));
  }
  void synchronize(StreamKey stream) override { cuda_.synchronize(stream); }
  std::pair<std::size_t, std::size_t> memory_info() const override { return cuda_.memory_info(); }
  std::size_t total_memory() const override { return cuda_.total_memory(); }

 private:
  UserAllocFn alloc_;
  UserFreeFn free_;
  int device_;
  CudaSegmentProvider cuda_;
};
}  // namespace

MemPool::MemPool(int device) : MemPool(PoolOptions{}, device) {}

MemPool::MemPool(PoolOptions options, int device)
    : device_(detail::resolve_device(device, "MemPool")),
      id_(CachingAllocator::new_pool_id()),
      options_(options),
      users_(std::make_shared<int>(0)) {
  device_allocator(device_).create_pool(id_, nullptr, options_);
}

MemPool::MemPool(UserAllocFn alloc_fn, UserFreeFn free_fn, int device, PoolOptions options)
    : device_(detail::resolve_device(device, "MemPool")),
      id_(CachingAllocator::new_pool_id()),
      options_(options),
      users_(std::make_shared<int>(0)) {
  if (!alloc_fn || !free_fn) {
    throw InvalidArgumentError("MemPool", "both the allocation and the free function are required");
  }
  device_allocator(device_).create_pool(id_, std::make_shared<UserFunctionProvider>(alloc_fn, free_fn, device_),
                                        options_);
}

MemPool::~MemPool() {
  try {
    device_allocator(device_).release_pool(id_);
  } catch (const std::exception& e) {
    CUDAKIT_LOG(warning, "releasing a MemPool failed: ", e.what());
  }
}

int MemPool::use_count() const noexcept { return static_cast<int>(users_.use_count()); }
std::size_t MemPool::reserved_bytes() const { return device_allocator(device_).pool_reserved_bytes(id_); }
std::size_t MemPool::allocated_bytes() const { return device_allocator(device_).pool_allocated_bytes(id_); }

MemorySnapshot MemPool::snapshot() const {
  MemorySnapshot all = device_allocator(device_).snapshot(/*include_traces=*/false);
  std::erase_if(all.segments, [&](const SegmentSnapshot& s) { return s.pool != id_; });
  return all;
}

MemPoolContext::MemPoolContext(MemPool& pool)
    : device_(pool.device_), previous_(t_current_pool[static_cast<std::size_t>(pool.device_)]), users_(pool.users_) {
  t_current_pool[static_cast<std::size_t>(device_)] = pool.id_;
}

MemPoolContext::~MemPoolContext() { t_current_pool[static_cast<std::size_t>(device_)] = previous_; }

}  // namespace cudakit::memory
