#pragma once
// @brief MemoryHistoryOptions: what record_memory_history keeps — torch.cuda.memory.
// _record_memory_history's enabled, context, stacks, max_entries, clear_history and skip_actions.

#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudakit::memory {

// The options of record_memory_history() and CachingAllocator::record_history(); the defaults
// record everything with C++ frames, without a limit.
struct MemoryHistoryOptions {
  // torch's `enabled`: none stops recording (and forgets the history); state keeps only the
  // state of live memory (each live block with the frames of its allocation, in snapshots); all
  // also keeps the history of every allocation, free and segment change (the trace).
  enum class Enabled { none, state, all };
  // torch's `context`: which events carry stack frames. state: live blocks only; alloc: also
  // the trace's allocations (and frees, with the frames of their allocation); all: also frees,
  // with the frames of the free itself. none: no frames at all.
  enum class Context { none, state, alloc, all };
  // torch's `stacks`: cpp captures the C++ frames of the caller (there is no Python here; torch's
  // "python" and "all" both map to cpp); none records contexts without frames.
  enum class Stacks { none, cpp };

  Enabled enabled = Enabled::all;  // what is recorded
  Context context = Context::all;  // which events carry frames
  Stacks stacks = Stacks::cpp;  // whether frames are captured
  // The trace keeps the last max_entries events (torch's default: sys.maxsize, no limit).
  std::size_t max_entries = std::numeric_limits<std::size_t>::max();
  // Forgets the history recorded so far (stopping always does).
  bool clear_history = false;
  // Trace actions not recorded, by their snapshot names: alloc, free_requested, free_completed,
  // segment_alloc, segment_free, segment_map, segment_unmap, oom (torch also names "snapshot",
  // an action cudakit does not record, accepted for the same reason). An unknown name is an
  // error.
  std::vector<std::string> skip_actions;

  // torch's strings: enabled "state" | "all" | nullopt (None); context "state" | "alloc" | "all"
  // | nullopt; stacks "cpp" | "python" | "all" | "none".
  // @param enabled "state", "all", or nullopt (torch's None: off).
  // @return the value.
  // @throws InvalidArgumentError naming the argument and the value.
  [[nodiscard]] static Enabled parse_enabled(std::optional<std::string_view> enabled);
  // torch's `context` string.
  // @param context "state", "alloc", "all", or nullopt (no frames).
  // @return the value.
  // @throws InvalidArgumentError naming the argument and the value.
  [[nodiscard]] static Context parse_context(std::optional<std::string_view> context);
  // torch's `stacks` string.
  // @param stacks "cpp", "python", "all" (all three: cpp) or "none".
  // @return the value.
  // @throws InvalidArgumentError naming the argument and the value.
  [[nodiscard]] static Stacks parse_stacks(std::string_view stacks);
};

}  // namespace cudakit::memory
