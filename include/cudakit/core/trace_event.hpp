#pragma once
// @brief TraceEvent: one runtime operation as the trace hooks report it (See Note [Runtime trace
// hooks] in trace_hooks.hpp).

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <span>

namespace cudakit {

// The operation a TraceEvent reports; the comment of each value names the TraceEvent fields it
// fills (the others keep their defaults).
enum class TraceEventKind : std::uint8_t {
  kernel_launch,       // name, stream, accesses (when the launching code declares them)
  memcpy,              // pointer (destination), source, bytes, copy_kind, stream
  memset,              // pointer, bytes, stream
  allocation,          // pointer, bytes, stream (the stream the block is for)
  free,                // pointer, bytes, stream (the block's stream)
  record_stream,       // pointer, other_stream (the stream that also uses the block)
  event_create,        // event
  event_destroy,       // event
  event_record,        // event, stream
  event_wait,          // event, stream (the stream made to wait)
  event_synchronize,   // event (the host waits)
  stream_create,       // stream
  stream_wait,         // stream (made to wait), other_stream (waited for), event (the marker)
  stream_synchronize,  // stream (the host waits)
  device_synchronize,  // device (the host waits for all its work)
  capture_begin,       // stream, graph (the capture's id)
  capture_end,         // stream, graph
  graph_launch,        // stream, graph (the graph replayed)
  stream_destroy,      // stream (still valid: reported before it is destroyed)
  collective,          // name, stream, accesses: a library's operation (NCCL's) seen as one launch
  range_push,          // name: an NVTX range opened on this thread (nvtx layer)
  range_pop,           // the innermost NVTX range of this thread closed
  range_start,         // name, range_id: an NVTX range that may end on another thread
  range_end,           // range_id
};
// @param kind a kind.
// @return its name as spelled in this enum, e.g. "kernel_launch" (a static string).
[[nodiscard]] const char* to_string(TraceEventKind kind) noexcept;

// One byte range a kernel reads or writes, as the code that launches it declares.
struct MemoryAccess {
  // How the kernel uses the range.
  enum class Mode : std::uint8_t { read, write, read_write };
  const void* begin = nullptr;  // the range's first byte (device address)
  std::size_t bytes = 0;        // the range's length
  Mode mode = Mode::read;       // how the kernel uses it
  // The kernel's argument the range belongs to, for reports (static storage; may be null).
  const char* argument = nullptr;
};

// One runtime operation, as a trace listener receives it. Which fields are set depends on `kind`
// (see TraceEventKind); pointers in it are valid during the listener's call only, unless a field
// says otherwise.
struct TraceEvent {
  TraceEventKind kind;  // the operation
  int device = -1;  // the ordinal of the device it acts on
  cudaStream_t stream = nullptr;  // the stream it is ordered on (see kind)
  cudaStream_t other_stream = nullptr;  // the second stream, for record_stream and stream_wait
  cudaEvent_t event = nullptr;  // the event, for event kinds and stream_wait
  const void* pointer = nullptr;  // the block, or a copy's or fill's destination
  const void* source = nullptr;  // a copy's source
  std::size_t bytes = 0;  // the bytes allocated, freed, copied or set
  cudaMemcpyKind copy_kind = cudaMemcpyDefault;  // a copy's direction
  // kernel_launch, collective, range_push, range_start: the operation's name, as the launching code gives it (static storage).
  const char* name = nullptr;
  // kernel_launch, collective: the ranges the operation touches; valid during the listener's call only.
  std::span<const MemoryAccess> accesses;
  // kernel_launch (collective: always true): whether the launching code declared its accesses (an empty list then means
  // the kernel touches no memory, not that nothing is known).
  bool accesses_declared = false;
  // capture_begin / capture_end / graph_launch: the graph's identity, the same value for a
  // graphs::Graph's capture and each of its replays; GraphRef::replay, which knows no capture,
  // reports its executable's handle.
  std::uintptr_t graph = 0;
  // range_start / range_end: the range's id (nvtxRangeStartEx's).
  std::uint64_t range_id = 0;
};

}  // namespace cudakit
