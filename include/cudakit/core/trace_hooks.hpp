#pragma once
// @brief The runtime trace hooks: one place where cudakit reports every runtime operation it
// performs — kernel launches, copies, allocations, frees, record_stream, event and stream
// operations, device synchronization, graph capture and launch — to whoever listens (the stream
// sanitizer, NVTX ranges, the profiler, a user's own tool). torch's GPUTrace is the prior art.
//
// Note [Runtime trace hooks]
// Listeners attach and detach at run time. With none attached, a reporting site costs one
// relaxed atomic load and a not-taken branch (trace_hooks_active()); the TraceEvent is built only
// when someone listens. Dispatch takes no lock (a snapshot of the listeners behind an atomic
// shared_ptr, See Note [Listener snapshots]); once detach_trace_listener returns, the listener is
// never called again. Listeners run on the thread that performs the operation, synchronously:
//  - before the operation for launches, copies, memsets, waits, synchronizations, frees,
//    record_stream and stream destruction (a race detector sees the operation before it is
//    queued, the block before it can be reused, the stream while it still exists);
//  - after it for allocation, event_create, stream_create, capture_begin (what they report exists
//    only then) and capture_end, graph_launch (reported once queued).
//  - NVTX ranges (range_push/pop/start/end) after NVTX got them, through the no-throw path: a
//    range is bookkeeping, not an operation to refuse.
// A listener may throw to refuse an operation (a sanitizer reporting a race): the exception leaves
// the operation's call before the operation is performed, for the kinds reported before it. From
// operations that cannot throw (frees and destructions in destructors) it is logged instead.
// What is reported: cudakit's own launches (those made through launch_kernel, launch.cuh),
// copies and memsets, cuBLAS calls of the tensor layer, the default allocator's blocks,
// Stream/Event/Graph operations, NVTX ranges; a collectives layer reports its operations as
// `collective` (the library's inner streams stay inside one operation on the caller's stream). Work a program
// queues with raw CUDA calls is not seen here; CUPTI (CuptiHub) sees that.

#include <atomic>
#include <cstdint>
#include <functional>

#include "cudakit/core/trace_event.hpp"

namespace cudakit {

// A listener: called synchronously, on the thread performing the operation, once per reported
// operation (See Note [Runtime trace hooks]). It may be called concurrently from several threads.
using TraceListener = std::function<void(const TraceEvent&)>;

// Adds `listener`; returns its id for detach_trace_listener. Thread-safe.
// @param listener the function to call with every reported operation from now on.
// @return the listener's id.
// @throws InvalidArgumentError for an empty function.
std::uint64_t attach_trace_listener(TraceListener listener);
// Removes a listener; waits for calls of it in progress on other threads. Unknown ids are
// ignored. Must not be called from inside the listener itself. Never throws (out of memory
// leaves the listener attached, logged at error level).
// @param id an id from attach_trace_listener().
void detach_trace_listener(std::uint64_t id) noexcept;

namespace detail {
extern std::atomic<int> g_trace_listener_count;
// Calls every listener with `event`; what a listener throws propagates.
void emit_trace_event(const TraceEvent& event);
// The same, for operations that cannot throw: a listener's exception is logged.
void emit_trace_event_nothrow(const TraceEvent& event) noexcept;
}  // namespace detail

// True while at least one listener is attached: the reporting sites' one relaxed load.
// @return whether any listener is attached.
[[nodiscard]] inline bool trace_hooks_active() noexcept {
  return detail::g_trace_listener_count.load(std::memory_order_relaxed) != 0;
}

}  // namespace cudakit

// Makes the function it expands in keep a frame pointer, whatever flags its file is built with
// (compilers give one to every function that takes its frame's address): the reporting sites in
// cudakit's header templates (launch_kernel) are compiled into the program's own functions, and a
// listener walking the frame-pointer chain (the stream sanitizer) then passes through them to
// their callers. See Note [Frame-pointer stacks] in src/core/stack_trace.cpp.
#define CUDAKIT_KEEP_FRAME_POINTER() __asm__ volatile("" : : "r"(__builtin_frame_address(0)))

// Reports a TraceEvent built from the designated initializers that follow, only when someone
// listens: CUDAKIT_TRACE({.kind = cudakit::TraceEventKind::memset, .pointer = p, .bytes = n}).
#define CUDAKIT_TRACE(...)                                                                   \
  do {                                                                                       \
    if (::cudakit::trace_hooks_active()) [[unlikely]] {                                      \
      CUDAKIT_KEEP_FRAME_POINTER();                                                          \
      ::cudakit::detail::emit_trace_event(::cudakit::TraceEvent __VA_ARGS__);                \
    }                                                                                        \
  } while (0)
// As CUDAKIT_TRACE, for operations that cannot throw (frees, destructions): an exception a
// listener throws is logged, not propagated.
#define CUDAKIT_TRACE_NOTHROW(...)                                                           \
  do {                                                                                       \
    if (::cudakit::trace_hooks_active()) [[unlikely]] {                                      \
      CUDAKIT_KEEP_FRAME_POINTER();                                                          \
      ::cudakit::detail::emit_trace_event_nothrow(::cudakit::TraceEvent __VA_ARGS__);        \
    }                                                                                        \
  } while (0)
