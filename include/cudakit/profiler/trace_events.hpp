#pragma once
// @brief TraceEvents: what a profiling session recorded, as plain structs with no CUPTI types, so
// that export, summaries and their tests and benchmarks work on the host with synthetic events.
// All timestamps are nanoseconds on one clock: CUPTI's (CuptiHub::timestamp()), which is also the
// clock record_function ranges are stamped with, so host and device timelines line up.

#include <cstdint>
#include <string>
#include <vector>

namespace cudakit::profiler {

struct KernelEvent {
  std::string name;  // demangled
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
  std::uint32_t device = 0;
  std::uint32_t stream = 0;  // CUPTI's stream id
  std::uint32_t correlation = 0;
  std::int32_t grid[3] = {0, 0, 0};
  std::int32_t block[3] = {0, 0, 0};
  std::uint32_t registers_per_thread = 0;
  std::uint32_t static_shared_memory = 0;
  std::uint32_t dynamic_shared_memory = 0;
  std::uint32_t graph_id = 0;       // 0: not launched from a graph
  std::uint64_t graph_node_id = 0;  // 0: not launched from a graph
};

// A copy or a fill on the device: both carry bytes; copies also carry their direction.
struct MemoryOpEvent {
  enum class Type : std::uint8_t { memcpy, memset };
  Type type = Type::memcpy;
  std::string name;  // "Memcpy HtoD (Pageable -> Device)", "Memset (Device)"
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
  std::uint32_t device = 0;
  std::uint32_t stream = 0;
  std::uint32_t correlation = 0;
  std::uint64_t bytes = 0;
  std::string copy_kind;  // "HtoD", "DtoH", "DtoD", ...; empty for memsets
  std::uint32_t graph_id = 0;
  std::uint64_t graph_node_id = 0;
};

// A CUDA runtime API call on a host thread.
struct RuntimeEvent {
  std::string name;  // "cudaLaunchKernel"
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
  std::uint32_t thread = 0;  // system thread id (gettid)
  std::uint32_t correlation = 0;
  std::uint32_t callback_id = 0;
};

// Time the host spent blocked in a synchronization (stream, event, context, stream-wait-event).
struct SyncEvent {
  std::string name;  // "Stream Sync", "Event Sync", "Context Sync", "Stream Wait Event"
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
  std::uint32_t device = 0;
  std::uint32_t stream = 0;  // CUPTI_SYNCHRONIZATION_INVALID_VALUE (0xFFFFFFFF) when none
  std::uint32_t correlation = 0;
};

// A record_function range on a host thread.
struct RangeEvent {
  std::string name;
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
  std::uint32_t thread = 0;
};

struct TraceEvents {
  std::uint32_t process_id = 0;  // the host process (pid of the host rows)
  std::vector<KernelEvent> kernels;
  std::vector<MemoryOpEvent> memory_ops;
  std::vector<RuntimeEvent> runtime;
  std::vector<SyncEvent> syncs;
  std::vector<RangeEvent> ranges;
};

}  // namespace cudakit::profiler
