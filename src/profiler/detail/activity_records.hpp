#pragma once
// CUPTI activity records -> the plain events of TraceEvents. Kept apart from the collector so
// that the host tier can check each conversion on hand-made records.

#include <cupti.h>

#include <string>
#include <string_view>

#include "cudakit/core/stack_trace.hpp"
#include "cudakit/profiler/trace_events.hpp"

namespace cudakit::profiler::detail {

using cudakit::demangle;  // the demangled name, or `mangled` itself when it is not a C++ mangled name

// `name` is the demangled kernel name (the caller caches demangling per kernel).
KernelEvent kernel_event(const CUpti_ActivityKernel10& record, std::string name);
MemoryOpEvent memcpy_event(const CUpti_ActivityMemcpy6& record);
MemoryOpEvent memset_event(const CUpti_ActivityMemset4& record);
// `name` from cuptiGetCallbackName (the caller caches it per callback id).
RuntimeEvent runtime_event(const CUpti_ActivityAPI& record, std::string name);
// The record names no device, only a context: the caller fills `device`.
SyncEvent sync_event(const CUpti_ActivitySynchronization2& record);

// The API's name without CUPTI's version suffix: "cudaLaunchKernel_v7000" -> "cudaLaunchKernel"
// (the names Kineto and Nsight show).
std::string api_name(std::string_view callback_name);

// "HtoD", "DtoH", ... for a CUpti_ActivityMemcpyKind.
const char* copy_kind_name(std::uint8_t copy_kind);
// "Pageable", "Pinned", "Device", ... for a CUpti_ActivityMemoryKind.
const char* memory_kind_name(std::uint32_t memory_kind);

}  // namespace cudakit::profiler::detail
