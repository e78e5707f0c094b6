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
// An allocation's context: its frames, innermost first.
using StackFrames = cudakit::StackFrames;

// One event of the recorded history (a device_traces entry of torch's snapshot).
struct TraceEntry {
  // What happened, with torch's names (to_string()): a block allocated; its free requested by
  // the program; its free completed (the streams it was recorded on finished); a segment
  // obtained from or returned to the provider; a chunk of an expandable segment mapped or
  // unmapped; a request that failed with OutOfMemoryError.
  enum class Action { alloc, free_requested, free_completed, segment_alloc, segment_free,
                      segment_map, segment_unmap, oom };
  Action action = Action::alloc;  // what happened
  std::uintptr_t address = 0;  // the block's or segment's address (0 for oom)
  std::size_t size = 0;  // bytes: the block's rounded size, the segment's, or the failed request's
  StreamKey stream = 0;  // the stream the block or segment belongs to
  std::int64_t time_us = 0;  // microseconds since the allocator was created (a steady clock)
  std::shared_ptr<const StackFrames> frames;  // the context's frames; null when none was kept
};
// torch's name of an action ("alloc", "free_requested", ..., "oom").
// @param action the action.
// @return a static string.
[[nodiscard]] const char* to_string(TraceEntry::Action action);

// One block of a segment, as a snapshot sees it.
struct BlockSnapshot {
  std::uintptr_t address = 0;  // the block's address
  std::size_t size = 0;  // the block's rounded size in bytes
  std::size_t requested_size = 0;  // bytes the program asked for; 0 unless allocated
  // active_allocated: in use; active_pending_free: freed, waiting for the streams it was
  // recorded on; inactive: free, reusable.
  enum class State { active_allocated, active_pending_free, inactive } state = State::inactive;  // its state
  std::shared_ptr<const StackFrames> frames;  // the allocation's context; null when not recorded
};

// One segment (memory obtained from the provider at once, or an expandable range) and its blocks.
struct SegmentSnapshot {
  int device = 0;  // the device ordinal
  std::uintptr_t address = 0;  // the segment's base address
  std::size_t total_size = 0;  // mapped bytes for expandable segments
  std::size_t allocated_size = 0;  // bytes in allocated blocks (rounded sizes)
  std::size_t active_size = 0;  // bytes in allocated and pending-free blocks
  std::size_t requested_size = 0;  // bytes the program asked for in allocated blocks
  StreamKey stream = 0;  // the stream whose requests the segment serves
  bool is_small = false;  // "small" or "large" segment type
  bool is_expandable = false;  // an expandable range (expandable_segments)
  PoolId pool;  // the pool the segment belongs to ({0, 0}: the default pool)
  std::vector<BlockSnapshot> blocks;  // its blocks, in address order
};

// The state of one device's allocator (torch's _snapshot() for one device).
struct MemorySnapshot {
  int device = 0;  // the device ordinal
  std::vector<SegmentSnapshot> segments;  // in address order
  std::vector<TraceEntry> trace;  // the recorded history, oldest first; empty when not asked for
  MemoryStats stats;  // the statistics when the snapshot was taken
  AllocatorConfig config;  // the allocator's settings then
};

// torch.cuda.memory._record_memory_history on `device` (-1: current): what `options` says is
// recorded, contexts with the C++ stack frames of the caller (capture_stack).
// @param options what to record.
// @param device the device ordinal; -1 means the current device.
// @throws InvalidArgumentError, with nothing changed, for an unknown skip_actions name.
// @throws StateError when enabling history under a backend other than the native caching one.
void record_memory_history(const MemoryHistoryOptions& options, int device = -1);
// The same with `capture` giving each context's frames in place of capture_stack: a language
// binding's own (the Python module's give the interpreter's frames, with or without the C++
// ones). An empty `capture` is capture_stack. Called on the allocating (or freeing) thread,
// outside the allocator's locks.
// @param options what to record.
// @param device the device ordinal; -1 means the current device.
// @param capture returns the frames of each recorded context.
// @throws InvalidArgumentError, with nothing changed, for an unknown skip_actions name.
// @throws StateError when enabling history under a backend other than the native caching one.
void record_memory_history(const MemoryHistoryOptions& options, int device, std::function<StackFrames()> capture);
// Shorthand: torch's defaults (everything, with C++ frames), the last `max_entries` events; or off.
// @param enabled true to record, false to stop (and drop what was recorded).
// @param max_entries the most events kept.
// @param device the device ordinal; -1 means the current device.
// @throws StateError when enabling history under a backend other than the native caching one.
void record_memory_history(bool enabled, std::size_t max_entries = 100000, int device = -1);
// `device`'s (-1: current) segments, statistics and recorded trace (torch's _snapshot()). Reads
// the allocator's state under its locks; no synchronization, no device work.
// @param device the device ordinal; -1 means the current device.
// @return the snapshot; under another backend, its memory with the native pools'.
// @throws InvalidArgumentError for an ordinal out of range.
// @throws CudaError when no CUDA device is available.
[[nodiscard]] MemorySnapshot memory_snapshot(int device = -1);
// torch.cuda.memory_snapshot(include_traces): one snapshot per device whose allocator exists, in
// device order. Without include_traces the recorded histories are not copied, only segments and
// statistics gathered.
// @param include_traces whether to copy each device's recorded history.
// @return the snapshots; empty when no allocator exists yet.
[[nodiscard]] std::vector<MemorySnapshot> memory_snapshot_all(bool include_traces = false);
// The snapshot as JSON text (segments, blocks with frames, device_traces, device_stats).
// @param snapshot the snapshot to write.
// @return JSON in PyTorch's snapshot schema.
[[nodiscard]] std::string snapshot_to_json(const MemorySnapshot& snapshot);
// Parses JSON written by snapshot_to_json (for tools and tests).
// @param json the text.
// @return the snapshot it describes.
// @throws InvalidArgumentError naming what is malformed.
[[nodiscard]] MemorySnapshot snapshot_from_json(const std::string& json);
// Writes memory_snapshot(device) to `path` as snapshot_to_json() gives it (torch's
// _dump_snapshot, in JSON rather than pickle).
// @param path the file to write (replaced when it exists).
// @param device the device ordinal; -1 means the current device.
// @throws InvalidArgumentError if the file cannot be written.
void dump_snapshot(const std::string& path, int device = -1);
// The calling thread's stack, innermost first, without cudakit's own frames.
// @param skip innermost frames to leave out besides capture_stack's own (0: from the caller on).
// @return the frames, symbolized (at most 64 captured, as cudakit::capture_stack).
[[nodiscard]] StackFrames capture_stack(int skip = 0);

}  // namespace cudakit::memory
