#include "cudakit/memory/device_allocator.hpp"

#include <array>
#include <atomic>
#include <cstdlib>
#include <functional>
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
#include "cudakit/memory/pluggable_allocator.hpp"
#include "cudakit/memory/snapshot.hpp"
#include "memory/detail/allocator_backend.hpp"

namespace cudakit::memory {
namespace {

using detail::kMaxDevices;

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

// Per thread and device: the pool allocations go to (use_mem_pool). Behind a pointer, made at
// the thread's first exchange: the 64 devices' ids inline were 1 KiB of static TLS, and a library
// loaded by dlopen after start-up (Python importing cudakit) must fit glibc's small surplus of it.
// Every allocation reads the pointer, so it is a plain initial-exec pointer (one load; eight bytes
// fit the surplus, as the allocator's other thread-locals do); a thread_local with a destructor
// would need a guard reached through __tls_get_addr on each read. The table's owner, which frees
// it when the thread ends, is touched only where the table is made.
using PoolTable = std::array<PoolId, kMaxDevices>;
[[gnu::tls_model("initial-exec")]] thread_local PoolTable* t_current_pools = nullptr;
struct PoolTableOwner {
  std::unique_ptr<PoolTable> table;
  ~PoolTableOwner() { t_current_pools = nullptr; }
};
thread_local PoolTableOwner t_current_pools_owner;

// Refuses an ordinal outside the tables indexed by it (0 to kMaxDevices - 1).
void check_device_ordinal(int device, const char* api) {
  if (device < 0 || device >= kMaxDevices) {
    throw InvalidArgumentError(api, cudakit::detail::concat("device ordinal ", device, " is out of range 0..",
                                                           kMaxDevices - 1));
  }
}

PoolId pool_of_this_thread(int device) {
  return t_current_pools ? (*t_current_pools)[static_cast<std::size_t>(device)] : PoolId{};
}

}  // namespace

CachingAllocator& device_allocator(int device) {
  device = cudakit::detail::resolve_device(device, "device_allocator");
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

PoolId current_pool(int device) {
  check_device_ordinal(device, "current_pool");
  return pool_of_this_thread(device);
}

PoolId exchange_current_pool(int device, PoolId pool) {
  check_device_ordinal(device, "exchange_current_pool");
  if (!t_current_pools) {
    t_current_pools_owner.table = std::make_unique<PoolTable>();
    t_current_pools = t_current_pools_owner.table.get();
  }
  return std::exchange((*t_current_pools)[static_cast<std::size_t>(device)], pool);
}

// ---- The backend (See Note [Allocator backends] in src/memory/detail/allocator_backend.hpp) ----

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
// The native allocator of `device` if it exists (pools, under another backend), else nullptr.
CachingAllocator* existing_allocator(int device) {
  if (device < 0 || device >= kMaxDevices) return nullptr;
  return registry().allocators[static_cast<std::size_t>(device)].load(std::memory_order_acquire);
}
// Frees `ptr` if a native allocator owns it, with one arena lookup (the owner frees as it
// recognizes the pointer).
bool native_deallocate_if_owned(void* ptr) {
  return first_allocator([&](CachingAllocator& a) { return a.deallocate_if_owned(ptr); }) != nullptr;
}
[[noreturn]] void not_ours(const char* api, const void* ptr) {
  throw InvalidArgumentError(api, cudakit::detail::concat("pointer ", ptr,
                                                 " was not allocated by cudakit's device allocator"));
}

// The native backend: each device's CachingAllocator.
class NativeBackend final : public detail::AllocatorBackend {
 public:
  std::string name() const override { return "native"; }
  void* allocate(std::size_t bytes, StreamRef stream) override {
    const int device = stream.device();
    return device_allocator(device).allocate(bytes, reinterpret_cast<StreamKey>(stream.handle()),
                                             pool_of_this_thread(device));
  }
  bool deallocate_if_owned(void* ptr) override { return native_deallocate_if_owned(ptr); }
  bool record_stream_if_owned(void* ptr, StreamRef stream) override {
    CachingAllocator* a = owner_of(ptr);
    if (!a) return false;
    a->record_stream(ptr, reinterpret_cast<StreamKey>(stream.handle()));
    return true;
  }
  std::optional<detail::LiveAllocation> find(const void* ptr) const override {
    CachingAllocator* a = owner_of(ptr);
    if (!a) return std::nullopt;
    return detail::LiveAllocation{.device = a->device(), .bytes = a->allocation_size(ptr)};
  }
  MemoryStats stats(int device) const override { return device_allocator(device).stats(); }
  void reset_peak_stats(int device) override { device_allocator(device).reset_peak_stats(); }
  void reset_accumulated_stats(int device) override { device_allocator(device).reset_accumulated_stats(); }
  void empty_cache() override {
    for (auto& slot : registry().allocators) {
      if (CachingAllocator* a = slot.load(std::memory_order_acquire)) a->empty_cache();
    }
  }
  void set_memory_fraction(double fraction, int device) override {
    device_allocator(device).set_memory_fraction(fraction);
  }
  double memory_fraction(int device) const override {
    return device_allocator(device).config().per_process_memory_fraction;
  }
  std::string summary(int device) const override { return device_allocator(device).summary(); }
  MemorySnapshot snapshot(int device) const override { return device_allocator(device).snapshot(); }
};

detail::AllocatorBackend& native_backend() {
  static auto* native = new NativeBackend;  // never destroyed, as the allocators
  return *native;
}

// Which way memory::allocate goes: `native` once the native backend has served an allocation
// (the fast path), `backend` once another one has; `unresolved` until the first allocation.
enum class Route : unsigned char { unresolved, native, backend };
std::atomic<Route> g_route{Route::unresolved};

struct BackendState {
  std::mutex mutex;
  std::atomic<detail::AllocatorBackend*> current{nullptr};  // null until chosen
  bool served = false;                                       // final: no swap after this
  std::vector<std::unique_ptr<detail::AllocatorBackend>> owned;  // never destroyed
};
BackendState& backend_state() {
  static auto* state = new BackendState;  // never destroyed: memory is freed until exit
  return *state;
}

// The backend CUDAKIT_ALLOC_CONF and CUDAKIT_NO_CUDA_MEMORY_CACHING choose. Under the lock.
detail::AllocatorBackend& choose_from_environment(BackendState& state) {
  const AllocatorConfig config = AllocatorConfig::from_environment();
  const char* no_caching = std::getenv("CUDAKIT_NO_CUDA_MEMORY_CACHING");
  const bool uncached = no_caching && detail::caching_disabled_by(no_caching);
  if (config.backend == AllocatorConfig::Backend::cuda_malloc_async) {
    if (uncached) {
      CUDAKIT_LOG(warning, "CUDAKIT_NO_CUDA_MEMORY_CACHING=1 is ignored with backend:cudaMallocAsync "
                           "(it turns off the native backend's caching, as torch's variable does)");
    }
    state.owned.push_back(detail::make_cuda_malloc_async_backend());
    return *state.owned.back();
  }
  if (uncached) {
    state.owned.push_back(detail::make_uncached_backend());
    return *state.owned.back();
  }
  return native_backend();
}

// The backend in charge, chosen on first need.
detail::AllocatorBackend& current_backend() {
  BackendState& state = backend_state();
  if (detail::AllocatorBackend* b = state.current.load(std::memory_order_acquire)) return *b;
  std::lock_guard lock(state.mutex);
  if (detail::AllocatorBackend* b = state.current.load()) return *b;
  detail::AllocatorBackend& chosen = choose_from_environment(state);
  state.current.store(&chosen, std::memory_order_release);
  return chosen;
}

// The backend, made final by the allocation about to be served.
detail::AllocatorBackend& serving_backend() {
  BackendState& state = backend_state();
  if (g_route.load(std::memory_order_acquire) == Route::backend) return *state.current.load(std::memory_order_acquire);
  (void)current_backend();  // chosen first (it takes the lock itself)
  std::lock_guard lock(state.mutex);
  detail::AllocatorBackend& final_backend = *state.current.load();  // a swap may have come between
  state.served = true;
  g_route.store(&final_backend == &native_backend() ? Route::native : Route::backend,
                std::memory_order_release);
  return final_backend;
}

// A backend other than native that has served allocations: the one to ask first about a
// pointer. Null under the native backend (and before the first allocation, when only the native
// allocators can own memory).
detail::AllocatorBackend* serving_other_backend() {
  if (g_route.load(std::memory_order_acquire) != Route::backend) return nullptr;
  return backend_state().current.load(std::memory_order_acquire);
}

bool is_native(const detail::AllocatorBackend& b) { return &b == &native_backend(); }

// `device` for a call to `b`: the pluggable backend calls no CUDA, so an explicit ordinal is
// taken as it is (the host tier runs it without a GPU); -1 and the CUDA backends ask the runtime.
int backend_device(const detail::AllocatorBackend& b, int device, const char* api) {
  if (!b.uses_cuda() && device >= 0) {
    check_device_ordinal(device, api);
    return device;
  }
  return cudakit::detail::resolve_device(device, api);
}

void* allocate_routed(std::size_t bytes, StreamRef stream) {
  detail::AllocatorBackend& b = serving_backend();
  const int device = stream.device();
  if (device < 0 || device >= kMaxDevices) {
    throw InvalidArgumentError("allocate", cudakit::detail::concat("stream of device ", device, ": out of range 0..",
                                                          kMaxDevices - 1));
  }
  // Pools are the native allocator's under every backend (use_mem_pool, graph capture).
  const PoolId pool = pool_of_this_thread(device);
  if (!pool.is_default() && !is_native(b)) {
    return device_allocator(device).allocate(bytes, reinterpret_cast<StreamKey>(stream.handle()), pool);
  }
  return b.allocate(bytes, stream);
}

// allocate() off the fast path: before the first allocation, under another backend, or with the
// trace hooks listening. Out of line, so that the fast path stays a tail call into the allocator
// (an alloc+free pair costs tens of nanoseconds, so the report after the call, which cost a
// frame and a few ns on every pair, showed: notes/figures.md).
[[gnu::noinline]] void* allocate_slow(std::size_t bytes, StreamRef stream) {
  void* ptr = allocate_routed(bytes, stream);
  CUDAKIT_TRACE({.kind = TraceEventKind::allocation, .device = stream.device(), .stream = stream.handle(),
                 .pointer = ptr, .bytes = bytes});
  return ptr;
}

[[gnu::noinline]] void deallocate_slow(void* ptr) {
  detail::AllocatorBackend* other = serving_other_backend();
  if (trace_hooks_active()) [[unlikely]] {
    // Before the block can be reused. An unknown pointer is reported below, not here.
    std::optional<detail::LiveAllocation> live = other ? other->find(ptr) : std::nullopt;
    if (!live) live = native_backend().find(ptr);
    if (live) {
      cudakit::detail::emit_trace_event({.kind = TraceEventKind::free, .device = live->device, .pointer = ptr,
                                .bytes = live->bytes});
    }
  }
  if (other && other->deallocate_if_owned(ptr)) return;
  if (!native_deallocate_if_owned(ptr)) not_ours("deallocate", ptr);
}

// The statistics of `device` under `b`, with the native pools' under another backend.
MemoryStats stats_of(detail::AllocatorBackend& b, int device) {
  MemoryStats m = b.stats(device);
  if (!is_native(b)) {
    if (CachingAllocator* a = existing_allocator(device)) m.merge(a->stats());
  }
  return m;
}

// @throws StateError naming `api` unless the device-wide allocator is the native one (history
// and OOM observers are the caching allocator's, as in torch).
void require_native_backend(const char* api) {
  const detail::AllocatorBackend& b = current_backend();
  if (!is_native(b)) {
    throw StateError(api, cudakit::detail::concat("not supported by the device allocator's ", b.settings(),
                                                  " (the caching allocator, backend:native, supports it)"));
  }
}

}  // namespace

CachingAllocator* device_allocator_owning(const void* ptr) noexcept { return ptr ? owner_of(ptr) : nullptr; }

void* allocate(std::size_t bytes, OptionalStream stream_arg) {
  const StreamRef stream = stream_or_current(stream_arg);
  // One relaxed load for the backend beside the trace hooks' (See Note [Allocator backends]).
  if (trace_hooks_active() || g_route.load(std::memory_order_relaxed) != Route::native) [[unlikely]] {
    return allocate_slow(bytes, stream);
  }
  const int device = stream.device();
  return device_allocator(device).allocate(bytes, reinterpret_cast<StreamKey>(stream.handle()),
                                           pool_of_this_thread(device));
}

void deallocate(void* ptr) {
  if (!ptr) return;
  if (trace_hooks_active() || g_route.load(std::memory_order_relaxed) != Route::native) [[unlikely]] {
    return deallocate_slow(ptr);
  }
  if (!native_deallocate_if_owned(ptr)) not_ours("deallocate", ptr);
}

void record_stream(void* ptr, StreamRef stream) {
  if (detail::AllocatorBackend* other = serving_other_backend()) {
    if (const auto live = other->find(ptr)) {
      CUDAKIT_TRACE({.kind = TraceEventKind::record_stream, .device = live->device,
                     .other_stream = stream.handle(), .pointer = ptr});
      if (!other->record_stream_if_owned(ptr, stream)) not_ours("record_stream", ptr);  // freed meanwhile
      return;
    }
  }
  CachingAllocator* a = owner_of(ptr);
  if (!a) not_ours("record_stream", ptr);
  CUDAKIT_TRACE({.kind = TraceEventKind::record_stream, .device = a->device(),
                 .other_stream = stream.handle(), .pointer = ptr});
  a->record_stream(ptr, reinterpret_cast<StreamKey>(stream.handle()));
}

MemoryStats memory_stats(int device) {
  detail::AllocatorBackend& b = current_backend();
  return stats_of(b, backend_device(b, device, "memory_stats"));
}
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
void reset_peak_memory_stats(int device) {
  detail::AllocatorBackend& b = current_backend();
  device = backend_device(b, device, "reset_peak_memory_stats");
  b.reset_peak_stats(device);
  if (CachingAllocator* a = is_native(b) ? nullptr : existing_allocator(device)) a->reset_peak_stats();
}
void reset_accumulated_memory_stats(int device) {
  detail::AllocatorBackend& b = current_backend();
  device = backend_device(b, device, "reset_accumulated_memory_stats");
  b.reset_accumulated_stats(device);
  if (CachingAllocator* a = is_native(b) ? nullptr : existing_allocator(device)) a->reset_accumulated_stats();
}

void empty_cache() {
  detail::AllocatorBackend& b = current_backend();
  b.empty_cache();
  if (!is_native(b)) native_backend().empty_cache();  // the pools
}

void set_per_process_memory_fraction(double fraction, int device) {
  detail::AllocatorBackend& b = current_backend();
  b.set_memory_fraction(fraction, backend_device(b, device, "set_per_process_memory_fraction"));
}
double get_per_process_memory_fraction(int device) {
  detail::AllocatorBackend& b = current_backend();
  return b.memory_fraction(backend_device(b, device, "get_per_process_memory_fraction"));
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
  require_native_backend("attach_out_of_memory_observer");
  return device_allocator(device).attach_oom_observer(std::move(observer));
}

std::string memory_summary(int device) {
  detail::AllocatorBackend& b = current_backend();
  device = backend_device(b, device, "memory_summary");
  if (is_native(b)) return b.summary(device);
  // The pools' statistics with the backend's, under the backend's header.
  return detail::format_memory_summary(stats_of(b, device), device, b.settings());
}

void change_current_allocator(const PluggableAllocator& allocator) {
  BackendState& state = backend_state();
  auto refuse_if_served = [&] {
    if (!state.served) return;
    throw StateError("change_current_allocator",
                     cudakit::detail::concat("Can't swap an already initialized allocator: the ",
                                    state.current.load()->name(),
                                    " backend has served allocations, which must return to it; call "
                                    "change_current_allocator before the first allocation"));
  };
  {
    std::lock_guard lock(state.mutex);
    refuse_if_served();
  }
  auto backend = detail::make_pluggable_backend(allocator);
  // torch initializes the allocator as it installs it; outside the lock, as the hook may call
  // back into cudakit.
  if (allocator.init_fn()) allocator.init_fn()(device_count());
  std::lock_guard lock(state.mutex);
  refuse_if_served();  // an allocation may have come meanwhile
  state.owned.push_back(std::move(backend));
  state.current.store(state.owned.back().get(), std::memory_order_release);
}

std::string get_allocator_backend() { return current_backend().name(); }

namespace {
std::shared_ptr<const StackFrames> caller_frames() { return std::make_shared<const StackFrames>(capture_stack()); }
}  // namespace

// History is the caching allocator's (torch's other backends refuse it too).
void record_memory_history(const MemoryHistoryOptions& options, int device) {
  if (options.enabled != MemoryHistoryOptions::Enabled::none) require_native_backend("record_memory_history");
  device_allocator(device).record_history(options, caller_frames);
}

void record_memory_history(const MemoryHistoryOptions& options, int device, std::function<StackFrames()> capture) {
  if (!capture) return record_memory_history(options, device);
  if (options.enabled != MemoryHistoryOptions::Enabled::none) require_native_backend("record_memory_history");
  device_allocator(device).record_history(
      options, [capture = std::move(capture)] { return std::make_shared<const StackFrames>(capture()); });
}

void record_memory_history(bool enabled, std::size_t max_entries, int device) {
  if (enabled) require_native_backend("record_memory_history");
  device_allocator(device).record_history(enabled, max_entries, caller_frames);
}

MemorySnapshot memory_snapshot(int device) {
  detail::AllocatorBackend& b = current_backend();
  device = backend_device(b, device, "memory_snapshot");
  MemorySnapshot s = b.snapshot(device);
  if (CachingAllocator* a = is_native(b) ? nullptr : existing_allocator(device)) {
    MemorySnapshot pools = a->snapshot();
    s.segments.insert(s.segments.end(), std::make_move_iterator(pools.segments.begin()),
                      std::make_move_iterator(pools.segments.end()));
    s.trace = std::move(pools.trace);
    s.stats.merge(pools.stats);
  }
  return s;
}

// ---- MemPool ----

namespace {
class UserFunctionProvider : public SegmentProvider {
 public:
  UserFunctionProvider(UserAllocFn alloc_fn, UserFreeFn free_fn, int device)
      : alloc_(alloc_fn), free_(free_fn), device_(device), cuda_(device) {}
  std::string name() const override { return cudakit::detail::concat("user allocator on cuda:", device_); }
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
    : device_(cudakit::detail::resolve_device(device, "MemPool")),
      id_(CachingAllocator::new_pool_id()),
      options_(options),
      users_(std::make_shared<int>(0)) {
  device_allocator(device_).create_pool(id_, nullptr, options_);
}

MemPool::MemPool(UserAllocFn alloc_fn, UserFreeFn free_fn, int device, PoolOptions options)
    : device_(cudakit::detail::resolve_device(device, "MemPool")),
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
    : device_(pool.device_), previous_(pool_of_this_thread(pool.device_)), users_(pool.users_) {
  (void)exchange_current_pool(device_, pool.id_);
}

MemPoolContext::~MemPoolContext() { (void)exchange_current_pool(device_, previous_); }

}  // namespace cudakit::memory
