#pragma once
// @brief Memory history and snapshots (torch.cuda.memory._record_memory_history, _snapshot,
// _dump_snapshot): what a snapshot holds — segments, their blocks, the recorded trace — and the
// functions that take one, written as JSON in PyTorch's snapshot schema so that `cudakit memviz`
// and PyTorch's own viewer both read them. CachingAllocator::snapshot() takes one of an
// allocator.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cudakit/memory/allocator_config.hpp"
#include "cudakit/core/stack_frame.hpp"
#include "cudakit/memory/memory_history_options.hpp"
#include "cudakit/memory/memory_stats.hpp"
#include "cudakit/memory/pool_id.hpp"
#include "cudakit/memory/segment_provider.hpp"

namespace cudakit::memory {

// The stack frames of an allocation's context (record_memory_history).
using StackFrame = cudakit::StackFrame;
using StackFrames = cudakit::StackFrames;

struct TraceEntry {
  enum class Action { alloc, free_requested, free_completed, segment_alloc, segment_free,
                      segment_map, segment_unmap, oom };
  Action action = Action::alloc;
  std::uintptr_t address = 0;
  std::size_t size = 0;
  StreamKey stream = 0;
  std::int64_t time_us = 0;
  std::shared_ptr<const StackFrames> frames;
};
[[nodiscard]] const char* to_string(TraceEntry::Action action);

struct BlockSnapshot {
  std::uintptr_t address = 0;
  std::size_t size = 0;
  std::size_t requested_size = 0;
  enum class State { active_allocated, active_pending_free, inactive } state = State::inactive;
  std::shared_ptr<const StackFrames> frames;
};

struct SegmentSnapshot {
  int device = 0;
  std::uintptr_t address = 0;
  std::size_t total_size = 0;  // mapped bytes for expandable segments
  std::size_t allocated_size = 0;
  std::size_t active_size = 0;
  std::size_t requested_size = 0;
  StreamKey stream = 0;
  bool is_small = false;  // "small" or "large" segment type
  bool is_expandable = false;
  PoolId pool;
  std::vector<BlockSnapshot> blocks;
};

struct MemorySnapshot {
  int device = 0;
  std::vector<SegmentSnapshot> segments;
  std::vector<TraceEntry> trace;
  MemoryStats stats;
  AllocatorConfig config;
};

// torch.cuda.memory._record_memory_history on `device` (-1: current): what `options` says is
// recorded, contexts with the C++ stack frames of the caller (capture_stack).
// @throws InvalidArgumentError, with nothing changed, for an unknown skip_actions name.
void record_memory_history(const MemoryHistoryOptions& options, int device = -1);
// The same with `capture` giving each context's frames in place of capture_stack: a language
// binding's own (the Python module's give the interpreter's frames, with or without the C++
// ones). An empty `capture` is capture_stack. Called on the allocating (or freeing) thread,
// outside the allocator's locks.
void record_memory_history(const MemoryHistoryOptions& options, int device, std::function<StackFrames()> capture);
// Shorthand: torch's defaults (everything, with C++ frames), the last `max_entries` events; or off.
void record_memory_history(bool enabled, std::size_t max_entries = 100000, int device = -1);
// `device`'s (-1: current) segments, statistics and recorded trace (torch's _snapshot()).
[[nodiscard]] MemorySnapshot memory_snapshot(int device = -1);
// torch.cuda.memory_snapshot(include_traces): one snapshot per device whose allocator exists, in
// device order. Without include_traces the recorded histories are not copied, only segments and
// statistics gathered.
[[nodiscard]] std::vector<MemorySnapshot> memory_snapshot_all(bool include_traces = false);
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
