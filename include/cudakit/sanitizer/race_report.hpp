#pragma once
// @brief RaceReport: one hazard the stream sanitizer found, naming both accesses (operation,
// stream, argument, byte range, the C++ stack that issued it) and the memory's allocation.

#include <cuda_runtime_api.h>

#include <cstdint>
#include <optional>
#include <string>

#include "cudakit/core/trace_event.hpp"
#include "cudakit/memory/snapshot.hpp"

namespace cudakit::sanitizer {

// The kind of hazard a RaceReport describes.
enum class HazardKind : std::uint8_t {
  read_after_write,    // a read not ordered after another stream's write
  write_after_read,    // a write not ordered after another stream's read
  write_after_write,   // a write not ordered after another stream's write
  free_while_in_use,   // a free (the allocator may reuse the block) before another stream's
                       // access to it is ordered, and without record_stream for that stream
  use_after_free,      // an access to a block freed and not allocated again
  uninitialized_read,  // a read of allocated memory nothing wrote
};
// @param kind a hazard kind.
// @return its name as spelled in the enum, e.g. "read_after_write" (a static string).
[[nodiscard]] const char* to_string(HazardKind kind) noexcept;

// One side of a hazard: an operation and how it touched the memory.
struct AccessInfo {
  std::uint64_t operation_id = 0;  // the detector's sequence number of the operation
  TraceEventKind kind = TraceEventKind::kernel_launch;  // launch, copy, memset, collective, free
  std::string name;                // kernel or collective name; empty for copies and frees
  cudaStream_t stream = nullptr;   // the stream it was queued on
  std::string argument;            // the declared argument's name; empty when not given
  std::uintptr_t begin = 0;        // the argument's whole declared range
  std::size_t bytes = 0;           // the range's length
  MemoryAccess::Mode mode = MemoryAccess::Mode::read;  // read, write or both
  std::uint64_t time_ns = 0;       // since the detector started
  memory::StackFrames stack;       // innermost first; empty when stacks are off
};

// The allocation a hazard's memory belongs to, as the detector saw it made.
struct AllocationInfo {
  std::uintptr_t begin = 0;        // the block's first byte
  std::size_t bytes = 0;           // the block's size
  cudaStream_t stream = nullptr;   // the stream the block was allocated for
  std::uint64_t operation_id = 0;  // the detector's sequence number of the allocation
  std::uint64_t time_ns = 0;       // since the detector started
  memory::StackFrames stack;       // where it was allocated; empty when stacks are off
};

// One hazard: two accesses to overlapping bytes that no stream ordering separates (or one access,
// for an uninitialized read or a use after free).
struct RaceReport {
  HazardKind kind = HazardKind::read_after_write;  // what went wrong
  AccessInfo current;                  // the operation being issued (or the free)
  std::optional<AccessInfo> previous;  // the access it conflicts with (none: uninitialized read)
  std::uintptr_t overlap_begin = 0;    // the bytes both touch
  std::size_t overlap_bytes = 0;  // their length
  std::optional<AllocationInfo> allocation;  // the block, where the detector saw it allocated

  // Several lines: the hazard, both accesses with their stacks, the allocation.
  // @return the report as text.
  [[nodiscard]] std::string to_string() const;
};

}  // namespace cudakit::sanitizer
