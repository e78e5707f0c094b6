#pragma once
// @brief TraceEvents: what a profiling session recorded, as plain structs with no CUPTI types, so
// that export, summaries and their tests and benchmarks work on the host with synthetic events.
// All timestamps are nanoseconds on one clock: CUPTI's (CuptiHub::timestamp()), which is also the
// clock record_function ranges are stamped with, so host and device timelines line up.

#include <cstdint>
#include <string>
#include <vector>

namespace cudakit::profiler {

// One kernel execution on the device.
struct KernelEvent {
  std::string name;  // demangled
  std::uint64_t start_ns = 0;  // when it began, ns
  std::uint64_t end_ns = 0;  // when it ended, ns
  std::uint32_t device = 0;  // the device ordinal CUPTI reports
  std::uint32_t stream = 0;  // CUPTI's stream id
  std::uint32_t correlation = 0;  // matches the RuntimeEvent that launched it
  std::int32_t grid[3] = {0, 0, 0};  // grid size, x y z
  std::int32_t block[3] = {0, 0, 0};  // block size, x y z
  std::uint32_t registers_per_thread = 0;  // registers each thread uses
  std::uint32_t static_shared_memory = 0;  // bytes of static shared memory per block
  std::uint32_t dynamic_shared_memory = 0;  // bytes of dynamic shared memory per block
  std::uint32_t graph_id = 0;       // 0: not launched from a graph
  std::uint64_t graph_node_id = 0;  // 0: not launched from a graph
};

// A copy or a fill on the device: both carry bytes; copies also carry their direction.
struct MemoryOpEvent {
  // Whether the operation is a copy or a fill.
  enum class Type : std::uint8_t { memcpy, memset };
  Type type = Type::memcpy;  // copy or fill
  std::string name;  // "Memcpy HtoD (Pageable -> Device)", "Memset (Device)"
  std::uint64_t start_ns = 0;  // when it began, ns
  std::uint64_t end_ns = 0;  // when it ended, ns
  std::uint32_t device = 0;  // the device ordinal CUPTI reports
  std::uint32_t stream = 0;  // CUPTI's stream id
  std::uint32_t correlation = 0;  // matches the RuntimeEvent that queued it
  std::uint64_t bytes = 0;  // bytes copied or set
  std::string copy_kind;  // "HtoD", "DtoH", "DtoD", ...; empty for memsets
  std::uint32_t graph_id = 0;  // 0: not launched from a graph
  std::uint64_t graph_node_id = 0;  // 0: not launched from a graph
};

// A CUDA runtime API call on a host thread.
struct RuntimeEvent {
  std::string name;  // "cudaLaunchKernel"
  std::uint64_t start_ns = 0;  // when the call began, ns
  std::uint64_t end_ns = 0;  // when it returned, ns
  std::uint32_t thread = 0;  // system thread id (gettid)
  std::uint32_t correlation = 0;  // matches the device work it queued
  std::uint32_t callback_id = 0;  // CUPTI's callback id of the API
};

// Time the host spent blocked in a synchronization (stream, event, context, stream-wait-event).
struct SyncEvent {
  std::string name;  // "Stream Sync", "Event Sync", "Context Sync", "Stream Wait Event"
  std::uint64_t start_ns = 0;  // when the wait began, ns
  std::uint64_t end_ns = 0;  // when it ended, ns
  std::uint32_t device = 0;  // the device ordinal CUPTI reports
  std::uint32_t stream = 0;  // CUPTI_SYNCHRONIZATION_INVALID_VALUE (0xFFFFFFFF) when none
  std::uint32_t correlation = 0;  // matches the RuntimeEvent that waited
};

// A record_function range on a host thread.
struct RangeEvent {
  std::string name;  // the record_function or NVTX range name
  std::uint64_t start_ns = 0;  // when it began, ns
  std::uint64_t end_ns = 0;  // when it ended, ns
  std::uint32_t thread = 0;  // system thread id (gettid)
};

// Everything a profiling session recorded, by kind.
struct TraceEvents {
  std::uint32_t process_id = 0;  // the host process (pid of the host rows)
  std::vector<KernelEvent> kernels;  // kernels that ran on the device
  std::vector<MemoryOpEvent> memory_ops;  // copies and fills on the device
  std::vector<RuntimeEvent> runtime;  // CUDA runtime API calls
  std::vector<SyncEvent> syncs;  // host waits
  std::vector<RangeEvent> ranges;  // record_function and NVTX ranges
};

}  // namespace cudakit::profiler
