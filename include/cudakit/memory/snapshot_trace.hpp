#pragma once
// @brief SnapshotTrace: the allocations and frees of a PyTorch memory snapshot, in the order they
// happened, ready to replay under other allocators (`cudakit alloc-replay SNAPSHOT`). Read from
// the pickle torch.cuda.memory._dump_snapshot writes, or from the JSON form `cudakit memviz` reads
// (cudakit's own snapshots among them), plain or gzip-compressed. See Note [Replaying a snapshot's
// trace] in src/memory/snapshot_trace.cpp.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cudakit/core/stack_frame.hpp"
#include "cudakit/memory/allocator_config.hpp"

namespace cudakit::memory {

// One operation of a snapshot's trace, with dense slot and stream indices for replay.
struct SnapshotOp {
  // What the operation does.
  enum class Kind : std::uint8_t {
    alloc,           // the program asked for `size` bytes on `stream`
    free,            // it freed allocation `slot` (torch's free_requested)
    free_completed,  // a free that waited for other streams' work (record_stream) completed
    empty_cache,     // the allocator returned its cached memory (torch.cuda.empty_cache())
  };
  static constexpr std::uint32_t kNoEntry = ~std::uint32_t{0};  // `entry` of a seed (no trace entry)
  static constexpr std::uint32_t kNoFrame = ~std::uint32_t{0};  // `frame` of an entry without one
  Kind kind = Kind::alloc;  // what the operation does
  // A free whose free_completed entry comes later (see Kind::free_completed); otherwise the
  // memory is reusable at the free.
  bool deferred = false;
  std::uint32_t slot = 0;    // dense allocation index, 0..num_slots-1
  std::uint32_t stream = 0;  // dense stream index, 0..streams.size()-1
  std::uint64_t size = 0;    // bytes requested (frees: the allocation's)
  std::uint32_t entry = kNoEntry;  // index in the device's trace list; kNoEntry for seeds
  std::uint32_t frame = kNoFrame;  // the entry's Python frame, in SnapshotTrace::frames
};

// One device's operations and what reading its trace found.
struct SnapshotDeviceTrace {
  int device = 0;  // the device ordinal recorded in the snapshot
  std::size_t trace_entries = 0;  // entries in the device's trace list, every action
  // The blocks live before the first entry (allocated before recording began, or before the
  // ring buffer's oldest entry) come first, as allocations with entry == kNoEntry: those the
  // trace frees, then those still allocated in the snapshot's segments.
  std::vector<SnapshotOp> ops;
  std::size_t seeded_blocks = 0;  // the allocations `ops` starts with (entry == kNoEntry)
  std::uint64_t seeded_bytes = 0;  // their requested bytes, summed
  // What the trace held, counted by kind.
  std::size_t allocs = 0,  // alloc entries
      frees = 0,  // free_requested entries
      empty_cache_calls = 0,  // runs of segment frees, each read as one torch.cuda.empty_cache()
      oom_entries = 0,  // oom entries
      unknown_actions = 0;  // entries of actions not known (skipped)
  std::uint32_t num_slots = 0;  // slots: the most allocations live at once, seeds included
  std::vector<std::int64_t> streams;  // the recorded stream of each dense index
  std::uint64_t peak_requested_bytes = 0;  // seeds included
  // Reserved bytes as the recording allocator reported them, from the segment events of the
  // trace and the final segments: absent when they do not add up (a trace that lost entries).
  std::optional<std::uint64_t> recorded_peak_reserved;
  std::uint64_t recorded_final_reserved = 0;  // reserved bytes of the snapshot's final segments
};

// A whole snapshot's traces, with the settings it was recorded under.
struct SnapshotTrace {
  std::string format;  // "pickle" or "JSON"
  std::vector<SnapshotDeviceTrace> devices;  // each device with trace entries, in device order
  // The allocator settings the snapshot was recorded with, in torch's keys (defaults where it
  // says nothing; expandable_segments as recorded). `settings_text` is how they read.
  AllocatorConfig settings;
  std::string settings_text;  // as recorded: PYTORCH_CUDA_ALLOC_CONF='...'; "" if none
  std::vector<std::string> ignored_settings;  // recorded keys the models do not take, and why
  // The frame of each entry that has one: the innermost Python frame outside torch's own files
  // (else the innermost frame).
  std::vector<StackFrame> frames;
};

// Whether the file at `path` is a snapshot (a pickle, or JSON) rather than a CSV allocation
// trace: by its first bytes, through gzip when compressed.
// @param path the file.
// @return true when its first non-blank byte starts a pickle or a JSON object; false otherwise,
// also when it cannot be read (never throws).
[[nodiscard]] bool looks_like_snapshot(const std::string& path);

// Reads the snapshot at `path` (`device`: only that device's trace; otherwise every device with
// entries), plain or gzip-compressed.
// @param path the file (torch's pickle, or JSON).
// @param device the recorded device ordinal to keep; every device with entries when empty.
// @return the traces, ready to replay.
// @throws InvalidArgumentError naming the file and what is wrong: it cannot be opened or read,
// is larger than the input limit, not a pickle or not JSON, not a snapshot, no trace entries
// (saying how to record them), a malformed entry (by its index and key), a size beyond any
// device.
[[nodiscard]] SnapshotTrace load_snapshot_trace(const std::string& path, std::optional<int> device = {});
// The same from bytes in memory; `name` is used in messages.
// @param bytes the snapshot's bytes (not compressed).
// @param name the snapshot's name in messages (a path).
// @param device the recorded device ordinal to keep; every device with entries when empty.
// @return the traces, ready to replay.
// @throws InvalidArgumentError as load_snapshot_trace(), naming `name`.
[[nodiscard]] SnapshotTrace parse_snapshot_trace(std::string_view bytes, const std::string& name,
                                                 std::optional<int> device = {});

}  // namespace cudakit::memory
