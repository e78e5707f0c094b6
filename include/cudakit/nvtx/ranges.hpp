#pragma once
// @brief NVTX ranges and marks in the cudakit domain: torch.cuda.nvtx for C++.
//
//   cudakit::nvtx::range_push("forward");   ...   cudakit::nvtx::range_pop();
//   auto id = cudakit::nvtx::range_start("load");   // may end on another thread
//   cudakit::nvtx::range_end(id);
//   cudakit::nvtx::mark("checkpoint");
//
// Each call goes to NVTX (Nsight Systems, or any tool NVTX_INJECTION64_PATH loads) and, when a
// trace listener is attached, to the trace hooks (range_push, range_pop, range_start, range_end),
// which is how a running cudakit::profiler::Profiler puts the ranges on its host timeline.
// Inline: with no tool and no listener a push+pop costs two calls to NVTX's stub and two relaxed
// loads (See Note [NVTX without a tool] in domain.hpp). Never throws; a trace listener that
// throws on a range is logged (ranges are bookkeeping, not operations to refuse).
// Stream ordering: ranges are host-side events, stamped when the call is made; they queue
// nothing on any stream, so a range around queued work marks when the host issued it.

#include <cstdint>

#include "cudakit/core/trace_hooks.hpp"
#include "cudakit/nvtx/event_attributes.hpp"

namespace cudakit::nvtx {

// nvtxRangeStartEx's id.
using RangeId = std::uint64_t;

// Opens a range on the calling thread, nested inside any it has open (nvtxDomainRangePushEx).
// @param attributes its message (a string or a RegisteredString), category, color and payload.
inline void range_push(const EventAttributes& attributes) noexcept {
  const nvtxEventAttributes_t e = detail::to_nvtx(attributes);
  nvtxDomainRangePushEx(domain(), &e);
  CUDAKIT_TRACE_NOTHROW({.kind = TraceEventKind::range_push, .name = attributes.text()});
}
// Opens a range named `name` on the calling thread.
// @param name the range's name; it must stay valid while a trace listener may read it (a
//        literal, typically).
inline void range_push(const char* name) noexcept { range_push(EventAttributes{.name = name}); }
// Opens a range named by a registered string on the calling thread.
// @param name the registered name.
inline void range_push(const RegisteredString& name) noexcept {
  range_push(EventAttributes{.registered = &name});
}

// Closes this thread's innermost range (nvtxDomainRangePop).
inline void range_pop() noexcept {
  nvtxDomainRangePop(domain());
  CUDAKIT_TRACE_NOTHROW({.kind = TraceEventKind::range_pop});
}

// Opens a range that is not tied to a thread (nvtxDomainRangeStartEx): range_end(id) closes it,
// on any thread.
// @param attributes its message, category, color and payload.
// @return the range's id, for range_end().
[[nodiscard]] inline RangeId range_start(const EventAttributes& attributes) noexcept {
  const nvtxEventAttributes_t e = detail::to_nvtx(attributes);
  const RangeId id = nvtxDomainRangeStartEx(domain(), &e);
  CUDAKIT_TRACE_NOTHROW({.kind = TraceEventKind::range_start, .name = attributes.text(), .range_id = id});
  return id;
}
// Opens a range named `name` that is not tied to a thread.
// @param name the range's name.
// @return the range's id, for range_end().
[[nodiscard]] inline RangeId range_start(const char* name) noexcept {
  return range_start(EventAttributes{.name = name});
}

// Closes the range range_start returned `id` for.
// @param id the id range_start() returned.
inline void range_end(RangeId id) noexcept {
  nvtxDomainRangeEnd(domain(), id);
  CUDAKIT_TRACE_NOTHROW({.kind = TraceEventKind::range_end, .range_id = id});
}

// An instant (nvtxDomainMarkEx); not reported to the trace hooks.
// @param attributes its message, category, color and payload.
inline void mark(const EventAttributes& attributes) noexcept {
  const nvtxEventAttributes_t e = detail::to_nvtx(attributes);
  nvtxDomainMarkEx(domain(), &e);
}
// An instant named `name`; not reported to the trace hooks.
// @param name the mark's name.
inline void mark(const char* name) noexcept { mark(EventAttributes{.name = name}); }

}  // namespace cudakit::nvtx
