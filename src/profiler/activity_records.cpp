#include "profiler/detail/activity_records.hpp"

#include "cudakit/core/detail/concat.hpp"

namespace cudakit::profiler::detail {

std::string api_name(std::string_view callback_name) {
  const std::size_t suffix = callback_name.rfind("_v");
  if (suffix == std::string_view::npos || suffix + 2 == callback_name.size() ||
      callback_name.find_first_not_of("0123456789", suffix + 2) != std::string_view::npos)
    return std::string(callback_name);
  return std::string(callback_name.substr(0, suffix));
}

const char* copy_kind_name(std::uint8_t copy_kind) {
  switch (copy_kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA: return "HtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH: return "AtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA: return "AtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD: return "AtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA: return "DtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "PtoP";
    default: return "Unknown";
  }
}

const char* memory_kind_name(std::uint32_t memory_kind) {
  switch (memory_kind) {
    case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE: return "Pageable";
    case CUPTI_ACTIVITY_MEMORY_KIND_PINNED: return "Pinned";
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE: return "Device";
    case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY: return "Array";
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED: return "Managed";
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC: return "Device Static";
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC: return "Managed Static";
    default: return "Unknown";
  }
}

KernelEvent kernel_event(const CUpti_ActivityKernel10& r, std::string name) {
  KernelEvent e;
  e.name = std::move(name);
  e.start_ns = r.start;
  e.end_ns = r.end;
  e.device = r.deviceId;
  e.stream = r.streamId;
  e.correlation = r.correlationId;
  e.grid[0] = r.gridX;
  e.grid[1] = r.gridY;
  e.grid[2] = r.gridZ;
  e.block[0] = r.blockX;
  e.block[1] = r.blockY;
  e.block[2] = r.blockZ;
  e.registers_per_thread = r.registersPerThread;
  e.static_shared_memory = static_cast<std::uint32_t>(r.staticSharedMemory);
  e.dynamic_shared_memory = static_cast<std::uint32_t>(r.dynamicSharedMemory);
  e.graph_id = r.graphId;
  e.graph_node_id = r.graphNodeId;
  return e;
}

// The fields memcpy and memset records share.
template <class Record>
void fill_memory_op(MemoryOpEvent& e, const Record& r) {
  e.start_ns = r.start;
  e.end_ns = r.end;
  e.device = r.deviceId;
  e.stream = r.streamId;
  e.correlation = r.correlationId;
  e.bytes = r.bytes;
  e.graph_id = r.graphId;
  e.graph_node_id = r.graphNodeId;
}

MemoryOpEvent memcpy_event(const CUpti_ActivityMemcpy6& r) {
  MemoryOpEvent e;
  e.type = MemoryOpEvent::Type::memcpy;
  e.copy_kind = copy_kind_name(r.copyKind);
  // Kineto's naming, which trace tools group by: "Memcpy HtoD (Pageable -> Device)".
  e.name = cudakit::detail::concat("Memcpy ", e.copy_kind, " (", memory_kind_name(r.srcKind),
                                   " -> ", memory_kind_name(r.dstKind), ")");
  fill_memory_op(e, r);
  return e;
}

MemoryOpEvent memset_event(const CUpti_ActivityMemset4& r) {
  MemoryOpEvent e;
  e.type = MemoryOpEvent::Type::memset;
  e.name = cudakit::detail::concat("Memset (", memory_kind_name(r.memoryKind), ")");
  fill_memory_op(e, r);
  return e;
}

RuntimeEvent runtime_event(const CUpti_ActivityAPI& r, std::string name) {
  RuntimeEvent e;
  e.name = std::move(name);
  e.start_ns = r.start;
  e.end_ns = r.end;
  e.thread = r.threadId;
  e.correlation = r.correlationId;
  e.callback_id = r.cbid;
  return e;
}

SyncEvent sync_event(const CUpti_ActivitySynchronization2& r) {
  SyncEvent e;
  switch (r.type) {
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE: e.name = "Event Sync"; break;
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT: e.name = "Stream Wait Event"; break;
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE: e.name = "Stream Sync"; break;
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE: e.name = "Context Sync"; break;
    default: e.name = "Sync"; break;
  }
  e.start_ns = r.start;
  e.end_ns = r.end;
  e.stream = r.streamId;
  e.correlation = r.correlationId;
  return e;
}

}  // namespace cudakit::profiler::detail
