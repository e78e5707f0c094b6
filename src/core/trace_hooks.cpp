#include "cudakit/core/trace_hooks.hpp"

#include <exception>

#include "cudakit/core/detail/listener_set.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/core/log.hpp"

namespace cudakit {
namespace detail {

std::atomic<int> g_trace_listener_count{0};

namespace {
struct TraceRegistry {
  ListenerSet<TraceListener> listeners;
};
TraceRegistry& registry() {
  static TraceRegistry* r = new TraceRegistry;  // never destroyed: operations report until exit
  return *r;
}
}  // namespace

void emit_trace_event(const TraceEvent& event) {
  registry().listeners.for_each([&](const TraceListener& listener) { listener(event); });
}

void emit_trace_event_nothrow(const TraceEvent& event) noexcept {
  try {
    emit_trace_event(event);
  } catch (const std::exception& e) {
    CUDAKIT_LOG(warning, "a trace listener threw on ", to_string(event.kind), ": ", e.what());
  } catch (...) {
    CUDAKIT_LOG(warning, "a trace listener threw on ", to_string(event.kind));
  }
}

}  // namespace detail

const char* to_string(TraceEventKind kind) noexcept {
  switch (kind) {
    case TraceEventKind::kernel_launch: return "kernel_launch";
    case TraceEventKind::memcpy: return "memcpy";
    case TraceEventKind::memset: return "memset";
    case TraceEventKind::allocation: return "allocation";
    case TraceEventKind::free: return "free";
    case TraceEventKind::record_stream: return "record_stream";
    case TraceEventKind::event_create: return "event_create";
    case TraceEventKind::event_destroy: return "event_destroy";
    case TraceEventKind::event_record: return "event_record";
    case TraceEventKind::event_wait: return "event_wait";
    case TraceEventKind::event_synchronize: return "event_synchronize";
    case TraceEventKind::stream_create: return "stream_create";
    case TraceEventKind::stream_wait: return "stream_wait";
    case TraceEventKind::stream_synchronize: return "stream_synchronize";
    case TraceEventKind::device_synchronize: return "device_synchronize";
    case TraceEventKind::capture_begin: return "capture_begin";
    case TraceEventKind::capture_end: return "capture_end";
    case TraceEventKind::graph_launch: return "graph_launch";
    case TraceEventKind::stream_destroy: return "stream_destroy";
    case TraceEventKind::collective: return "collective";
    case TraceEventKind::range_push: return "range_push";
    case TraceEventKind::range_pop: return "range_pop";
    case TraceEventKind::range_start: return "range_start";
    case TraceEventKind::range_end: return "range_end";
  }
  return "unknown";
}

std::uint64_t attach_trace_listener(TraceListener listener) {
  if (!listener) throw InvalidArgumentError("attach_trace_listener", "the listener is an empty function");
  auto& r = detail::registry();
  const int id = r.listeners.add(std::move(listener));
  // After the listener is in the set: a site that sees the count also sees the listener.
  detail::g_trace_listener_count.fetch_add(1, std::memory_order_release);
  return static_cast<std::uint64_t>(id);
}

void detach_trace_listener(std::uint64_t id) noexcept {
  auto& r = detail::registry();
  try {
    if (r.listeners.remove(static_cast<int>(id)) != nullptr) {
      detail::g_trace_listener_count.fetch_sub(1, std::memory_order_release);
    }
  } catch (...) {
    // remove() allocates the next snapshot; out of memory leaves the listener attached.
    CUDAKIT_LOG(error, "detach_trace_listener(", id, "): out of memory; the listener stays attached");
  }
}

}  // namespace cudakit
