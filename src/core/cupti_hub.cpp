#include "cudakit/core/cupti_hub.hpp"

#include "cudakit/core/driver_api.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <bitset>
#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>
#include <utility>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/detail/cupti_api.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/core/log.hpp"
#include "cudakit/core/detail/listener_set.hpp"

namespace cudakit {
namespace {

// The table the hub reads where CuptiHub() did not load CUPTI: every entry null, so that the
// clock and the callback names take their fallbacks.
const detail::CuptiApi& no_cupti() {
  static const detail::CuptiApi empty;
  return empty;
}

// Activity buffers: large enough that a 1000-kernel replay fits in one, aligned as CUPTI asks.
constexpr std::size_t kActivityBufferBytes = 8u << 20;
constexpr std::size_t kActivityBufferAlignment = 8;

struct CallbackListener {
  CUpti_CallbackDomain domain;
  bool all_ids;  // the whole domain, or only `id`
  CUpti_CallbackId id;
  CuptiHub::CallbackFn fn;
};

using KindSet = std::bitset<CUPTI_ACTIVITY_KIND_COUNT>;

struct ActivityListener {
  KindSet kinds;
  std::vector<CUpti_ActivityKind> kind_list;
  CuptiHub::ActivityFn fn;
};

// A listener that throws must not unwind through CUPTI's C frames.
template <class Fn, class... Args>
void call_listener(const Fn& fn, const Args&... args) noexcept {
  try {
    fn(args...);
  } catch (const std::exception& e) {
    CUDAKIT_LOG(warning, "a CUPTI listener threw: ", e.what());
  } catch (...) {
    CUDAKIT_LOG(warning, "a CUPTI listener threw");
  }
}

// Everything the hub owns; a namespace-scope type so that CUPTI's C callbacks below can name it.
struct HubState {
  // CUPTI's table (cupti_api()) once CuptiHub() found a driver, else one that loaded nothing.
  const detail::CuptiApi* api = &no_cupti();
  bool available = false;
  std::string reason;
  CUpti_SubscriberHandle subscriber = nullptr;

  cudakit::detail::ListenerSet<CallbackListener> callbacks;
  cudakit::detail::ListenerSet<ActivityListener> activities;

  // Reference counts of what is enabled in CUPTI; see Note [Enable reference counts].
  std::mutex config_mutex;
  std::map<CUpti_CallbackDomain, int> domain_refs;
  std::map<std::pair<CUpti_CallbackDomain, CUpti_CallbackId>, int> id_refs;
  std::map<CUpti_ActivityKind, int> kind_refs;

  std::atomic<std::uint64_t> dropped{0};

  std::string result_string(CUptiResult result) const {
    const char* text = nullptr;
    if (api->cuptiGetResultString != nullptr) api->cuptiGetResultString(result, &text);
    return text != nullptr ? cudakit::detail::concat(text, " (", static_cast<int>(result), ")")
                           : cudakit::detail::concat("CUPTI error ", static_cast<int>(result));
  }
  void require_available(const char* api_name) const {
    if (!available) throw StateError(api_name, cudakit::detail::concat("CUPTI is unavailable: ", reason));
  }
};

}  // namespace

struct CuptiHub::Impl : HubState {};

// Note [Enable reference counts]
// CUPTI has one switch per callback domain, per callback id and per activity kind for the whole
// process; listeners come and go independently (a profiler, the annotation recorder), so the hub
// counts how many listeners want each switch and flips it only on 0 <-> 1. Disabling a domain
// in CUPTI also disables its individual ids, so when the last whole-domain listener leaves, the
// ids that single-id listeners still want are switched back on.

namespace {

HubState* g_impl = nullptr;  // for CUPTI's C callbacks, which take no user data for buffers

void CUPTIAPI on_callback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId id,
                          const void* data) {
  auto* impl = static_cast<HubState*>(userdata);
  impl->callbacks.for_each([&](const CallbackListener& listener) {
    if (listener.domain == domain && (listener.all_ids || listener.id == id))
      call_listener(listener.fn, domain, id, data);
  });
}

void CUPTIAPI on_buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(kActivityBufferAlignment, kActivityBufferBytes));
  *size = *buffer != nullptr ? kActivityBufferBytes : 0;
  *max_records = 0;  // as many as fit
}

void CUPTIAPI on_buffer_completed(CUcontext context, uint32_t stream_id, uint8_t* buffer,
                                  size_t /*size*/, size_t valid_size) {
  HubState* impl = g_impl;
  if (impl != nullptr && valid_size > 0) {
    impl->activities.for_each([&](const ActivityListener& listener) {
      CUpti_Activity* record = nullptr;
      while (impl->api->cuptiActivityGetNextRecord(buffer, valid_size, &record) == CUPTI_SUCCESS) {
        const auto kind = static_cast<std::size_t>(record->kind);
        if (kind < listener.kinds.size() && listener.kinds.test(kind))
          call_listener(listener.fn, *record);
      }
    });
    std::size_t dropped = 0;
    if (impl->api->cuptiActivityGetNumDroppedRecords(context, stream_id, &dropped) == CUPTI_SUCCESS)
      impl->dropped.fetch_add(dropped, std::memory_order_relaxed);
  }
  std::free(buffer);
}

}  // namespace

CuptiHub& CuptiHub::instance() {
  // Never destroyed: CUPTI may deliver buffers from its own thread while static destructors
  // run at exit, and a destroyed hub would be called then.
  static CuptiHub* const hub = new CuptiHub();
  return *hub;
}

CuptiHub::CuptiHub() : impl_(new Impl) {
  Impl& impl = *impl_;
  // Without a driver CUPTI can only fail, and loading it would start its threads for nothing.
  if (!cudakit::detail::driver().loaded) {
    impl.reason = "no CUDA driver on this machine (CUPTI needs one)";
    return;
  }
  const detail::CuptiApi& cupti = detail::cupti_api();
  if (!cupti.status.loaded) {
    impl.reason = cupti.status.reason;
    return;
  }
  impl.api = &cupti;
  if (const CUptiResult r = impl.api->cuptiSubscribe(&impl.subscriber, &on_callback, &impl);
      r != CUPTI_SUCCESS) {
    impl.reason = cudakit::detail::concat("cuptiSubscribe failed: ", impl.result_string(r),
                                 r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
                                     ? " (another CUPTI client, e.g. Nsight Systems, is attached)"
                                 : r == CUPTI_ERROR_UNKNOWN || r == CUPTI_ERROR_NOT_INITIALIZED
                                     ? " (no usable CUDA driver on this machine?)"
                                     : "");
    return;
  }
  // System thread ids, so record_function's ranges and runtime calls share one row per thread.
  impl.api->cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
  g_impl = &impl;
  if (const CUptiResult r =
          impl.api->cuptiActivityRegisterCallbacks(&on_buffer_requested, &on_buffer_completed);
      r != CUPTI_SUCCESS) {
    impl.reason = cudakit::detail::concat("cuptiActivityRegisterCallbacks failed: ", impl.result_string(r));
    impl.api->cuptiUnsubscribe(impl.subscriber);
    impl.subscriber = nullptr;
    g_impl = nullptr;
    return;
  }
  impl.available = true;
}

CuptiHub::~CuptiHub() {
  if (impl_->subscriber != nullptr) impl_->api->cuptiUnsubscribe(impl_->subscriber);
  if (g_impl == impl_) g_impl = nullptr;
  delete impl_;
}

bool CuptiHub::available() const noexcept { return impl_->available; }
const std::string& CuptiHub::reason() const noexcept { return impl_->reason; }

int CuptiHub::add_callback(CUpti_CallbackDomain domain, CallbackFn fn) {
  impl_->require_available("CuptiHub::add_callback");
  std::lock_guard lock(impl_->config_mutex);
  if (impl_->domain_refs[domain]++ == 0) {
    if (const CUptiResult r = impl_->api->cuptiEnableDomain(1, impl_->subscriber, domain);
        r != CUPTI_SUCCESS) {
      --impl_->domain_refs[domain];
      throw StateError("cuptiEnableDomain",
                       cudakit::detail::concat("domain ", static_cast<int>(domain), ": ",
                                      impl_->result_string(r)));
    }
  }
  return impl_->callbacks.add({domain, true, 0, std::move(fn)});
}

int CuptiHub::add_callback_id(CUpti_CallbackDomain domain, CUpti_CallbackId id, CallbackFn fn) {
  impl_->require_available("CuptiHub::add_callback_id");
  std::lock_guard lock(impl_->config_mutex);
  if (impl_->id_refs[{domain, id}]++ == 0) {
    if (const CUptiResult r = impl_->api->cuptiEnableCallback(1, impl_->subscriber, domain, id);
        r != CUPTI_SUCCESS) {
      --impl_->id_refs[{domain, id}];
      throw StateError("cuptiEnableCallback",
                       cudakit::detail::concat("domain ", static_cast<int>(domain), ", id ", id, ": ",
                                      impl_->result_string(r)));
    }
  }
  return impl_->callbacks.add({domain, false, id, std::move(fn)});
}

void CuptiHub::remove_callback(int listener) {
  const std::unique_ptr<CallbackListener> removed = impl_->callbacks.remove(listener);
  if (!removed) return;
  std::lock_guard lock(impl_->config_mutex);
  Impl& impl = *impl_;
  if (removed->all_ids) {
    if (--impl.domain_refs[removed->domain] == 0) {
      impl.api->cuptiEnableDomain(0, impl.subscriber, removed->domain);
      // See Note [Enable reference counts].
      for (const auto& [key, refs] : impl.id_refs) {
        if (key.first == removed->domain && refs > 0)
          impl.api->cuptiEnableCallback(1, impl.subscriber, key.first, key.second);
      }
    }
  } else if (--impl.id_refs[{removed->domain, removed->id}] == 0 &&
             impl.domain_refs[removed->domain] == 0) {
    impl.api->cuptiEnableCallback(0, impl.subscriber, removed->domain, removed->id);
  }
}

int CuptiHub::add_activity_listener(std::vector<CUpti_ActivityKind> kinds, ActivityFn fn) {
  impl_->require_available("CuptiHub::add_activity_listener");
  ActivityListener listener{{}, {}, std::move(fn)};
  for (const CUpti_ActivityKind kind : kinds) {
    const auto index = static_cast<std::size_t>(kind);
    if (index >= listener.kinds.size() || index == 0)
      throw InvalidArgumentError("CuptiHub::add_activity_listener",
                                 cudakit::detail::concat("unknown activity kind ", index));
    if (!listener.kinds.test(index)) listener.kind_list.push_back(kind);
    listener.kinds.set(index);
  }
  std::lock_guard lock(impl_->config_mutex);
  Impl& impl = *impl_;
  for (std::size_t i = 0; i < listener.kind_list.size(); ++i) {
    const CUpti_ActivityKind kind = listener.kind_list[i];
    if (impl.kind_refs[kind]++ > 0) continue;
    if (const CUptiResult r = impl.api->cuptiActivityEnable(kind); r != CUPTI_SUCCESS) {
      // Roll back this listener's kinds, so a failed add leaves the counts as they were.
      for (std::size_t j = 0; j <= i; ++j) {
        const CUpti_ActivityKind enabled = listener.kind_list[j];
        if (--impl.kind_refs[enabled] == 0 && j < i) impl.api->cuptiActivityDisable(enabled);
      }
      throw StateError("cuptiActivityEnable",
                       cudakit::detail::concat("activity kind ", static_cast<int>(kind), ": ",
                                      impl.result_string(r)));
    }
  }
  return impl.activities.add(std::move(listener));
}

void CuptiHub::remove_activity_listener(int listener) {
  const std::unique_ptr<ActivityListener> removed = impl_->activities.remove(listener);
  if (!removed) return;
  std::lock_guard lock(impl_->config_mutex);
  for (const CUpti_ActivityKind kind : removed->kind_list) {
    if (--impl_->kind_refs[kind] == 0) impl_->api->cuptiActivityDisable(kind);
  }
}

void CuptiHub::flush() {
  if (!impl_->available) return;
  impl_->api->cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

CUptiResult CuptiHub::get_graph_node_id(CUgraphNode node, std::uint64_t* id) const {
  if (impl_->api->cuptiGetGraphNodeId == nullptr) return CUPTI_ERROR_NOT_INITIALIZED;
  return impl_->api->cuptiGetGraphNodeId(node, id);
}

CUptiResult CuptiHub::get_graph_id(CUgraph graph, std::uint32_t* id) const {
  if (impl_->api->cuptiGetGraphId == nullptr) return CUPTI_ERROR_NOT_INITIALIZED;
  return impl_->api->cuptiGetGraphId(graph, id);
}

CUptiResult CuptiHub::get_graph_exec_id(CUgraphExec exec, std::uint32_t* id) const {
  if (impl_->api->cuptiGetGraphExecId == nullptr) return CUPTI_ERROR_NOT_INITIALIZED;
  return impl_->api->cuptiGetGraphExecId(exec, id);
}

std::uint64_t CuptiHub::timestamp() const {
  std::uint64_t now = 0;
  if (impl_->api->cuptiGetTimestamp != nullptr && impl_->api->cuptiGetTimestamp(&now) == CUPTI_SUCCESS)
    return now;
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::system_clock::now().time_since_epoch())
                                        .count());
}

std::string CuptiHub::callback_name(CUpti_CallbackDomain domain, CUpti_CallbackId id) const {
  const char* name = nullptr;
  if (impl_->api->cuptiGetCallbackName != nullptr &&
      impl_->api->cuptiGetCallbackName(domain, id, &name) == CUPTI_SUCCESS && name != nullptr) {
    return name;
  }
  return cudakit::detail::concat("cbid ", id);
}

std::uint64_t CuptiHub::dropped_records() const noexcept {
  return impl_->dropped.load(std::memory_order_relaxed);
}

std::uint32_t CuptiHub::current_thread_id() noexcept {
  return static_cast<std::uint32_t>(::syscall(SYS_gettid));
}

}  // namespace cudakit
