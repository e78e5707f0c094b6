#pragma once
// @brief What-if replays of a PyTorch memory snapshot's trace: the same allocations and frees under
// several allocators on the host, with the peaks each would have reached and, for a given
// device size, the first operation at which each would have run out of memory. `cudakit
// alloc-replay SNAPSHOT` prints them. See Note [What-if replays] in src/memory/what_if_replay.cpp.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cudakit/memory/allocator_config.hpp"
#include "cudakit/memory/snapshot_trace.hpp"

namespace cudakit::memory {

// The allocators a what-if replay compares, in the order of its rows.
enum class WhatIfAllocator {
  cudakit,           // cudakit's CachingAllocator, default options, on simulated memory
  torch_segments,    // torch's CUDACachingAllocator policy, expandable_segments:False
  torch_expandable,  // the same with expandable_segments:True
  async_pool,        // a cudaMallocAsync-like pool (AsyncPoolModel)
};
// "cudakit (default)", "torch, expandable_segments:False", ...
// @param allocator the allocator.
// @return its readable name (a static string).
[[nodiscard]] const char* to_string(WhatIfAllocator allocator) noexcept;
// "cudakit", "torch_segments", ...: the JSON name.
// @param allocator the allocator.
// @return its key in `cudakit alloc-replay --json` (a static string).
[[nodiscard]] const char* key_of(WhatIfAllocator allocator) noexcept;

// What a what-if replay models.
struct WhatIfOptions {
  // torch's settings for the torch rows (each row sets expandable_segments itself).
  AllocatorConfig torch_config;
  // cudakit's options for its row.
  AllocatorConfig cudakit_config;
  // The device's total memory: what torch's memory fraction, garbage-collection threshold and
  // expandable segments' address ranges are taken of.
  std::size_t device_memory = std::size_t{141} << 30;
  // The memory to fit in: with it, a second replay of each allocator stops at its first failure.
  std::optional<std::size_t> capacity;
};

// An operation that failed in a replay.
struct WhatIfFailure {
  std::size_t op = 0;  // index in SnapshotDeviceTrace::ops
  SnapshotOp what;     // the request that failed
};

// One allocator's result.
struct WhatIfRow {
  WhatIfAllocator allocator = WhatIfAllocator::cudakit;  // which allocator
  // Over the whole trace with as much memory as it takes (see `stopped`).
  std::uint64_t peak_reserved = 0;
  std::uint64_t peak_allocated = 0;  // the peak of allocated bytes, likewise
  std::size_t device_allocations = 0;  // segments obtained or ranges mapped
  // A failure even without a capacity limit (a per-process memory fraction in the settings, or
  // beyond the replay's ceiling): the peaks are up to it.
  std::optional<WhatIfFailure> stopped;
  // With WhatIfOptions::capacity: the first operation that failed within it, if any.
  std::optional<WhatIfFailure> first_failure;
  std::uint64_t peak_reserved_within_capacity = 0;  // the peak reserved in that second replay
};

// Replays `trace` under each allocator in WhatIfAllocator's order, on the host (no device is
// used; each replay is single-threaded).
// @param trace one device's operations from load_snapshot_trace().
// @param options the settings, the device's memory and the capacity to fit in.
// @return one row per allocator.
// @throws InvalidArgumentError for a trace no model can number (See Note [What-if replays]).
[[nodiscard]] std::vector<WhatIfRow> replay_what_if(const SnapshotDeviceTrace& trace, const WhatIfOptions& options);

}  // namespace cudakit::memory
