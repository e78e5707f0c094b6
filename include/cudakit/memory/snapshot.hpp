#pragma once
// Memory history and snapshots (torch.cuda.memory._record_memory_history, _snapshot,
// _dump_snapshot), written as JSON in PyTorch's snapshot schema so that `cudakit memviz` and
// PyTorch's own viewer both read them.

#include <cstddef>
#include <string>

#include "cudakit/memory/caching_allocator.hpp"

namespace cudakit::memory {

// Starts (or stops) recording allocation events, each allocation with the C++ stack frames of
// its caller, on `device` (-1: current); the last `max_entries` events are kept.
void record_memory_history(bool enabled, std::size_t max_entries = 100000, int device = -1);
[[nodiscard]] MemorySnapshot memory_snapshot(int device = -1);
// The snapshot as JSON text (segments, blocks with frames, device_traces, device_stats).
[[nodiscard]] std::string snapshot_to_json(const MemorySnapshot& snapshot);
// Parses JSON written by snapshot_to_json (for tools and tests).
// @throws InvalidArgumentError naming what is malformed.
[[nodiscard]] MemorySnapshot snapshot_from_json(const std::string& json);
// Writes memory_snapshot(device) to `path`. @throws InvalidArgumentError if it cannot be written.
void dump_snapshot(const std::string& path, int device = -1);
// The calling thread's stack, innermost first, without cudakit's own frames.
[[nodiscard]] StackFrames capture_stack(int skip = 0);

}  // namespace cudakit::memory
