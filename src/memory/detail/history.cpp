#include "memory/detail/history.hpp"

#include <string>
#include <string_view>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/error.hpp"

namespace cudakit::memory::detail {
namespace {

using Context = MemoryHistoryOptions::Context;

bool is_free(TraceEntry::Action action) {
  return action == TraceEntry::Action::free_requested || action == TraceEntry::Action::free_completed;
}

}  // namespace

void History::capture(std::shared_ptr<const StackFrames>& frames) const {
  if (!capturing_.load(std::memory_order_relaxed)) return;
  // Called outside mutex_: the capture walks the stack and may be slow.
  if (const auto fn = capture_function()) frames = fn();
}

CachingAllocator::CaptureFrames History::capture_function() const {
  std::lock_guard lock(mutex_);
  return capture_;
}

void History::configure(const MemoryHistoryOptions& options, CachingAllocator::CaptureFrames capture) {
  std::array<bool, kActions> skipped{};
  for (const std::string& name : options.skip_actions) {
    bool known = name == "snapshot";  // torch's action for snapshots taken; never recorded here
    for (std::size_t a = 0; a < kActions; ++a) {
      if (name == to_string(static_cast<TraceEntry::Action>(a))) skipped[a] = known = true;
    }
    if (!known) {
      throw InvalidArgumentError(
          "record_memory_history",
          cudakit::detail::concat("skip_actions entry '", name,
                                  "' is not an action (known: alloc, free_requested, free_completed, "
                                  "segment_alloc, segment_free, segment_map, segment_unmap, oom, "
                                  "snapshot)"));
    }
  }
  const bool on = options.enabled != MemoryHistoryOptions::Enabled::none;
  const bool tracing = on && options.enabled == MemoryHistoryOptions::Enabled::all && options.max_entries > 0;
  const Context context = on ? options.context : Context::none;
  const bool frames = context != Context::none && options.stacks == MemoryHistoryOptions::Stacks::cpp && capture;
  std::lock_guard lock(mutex_);
  if (!on || options.clear_history) entries_.clear();
  max_ = tracing ? options.max_entries : 0;
  while (entries_.size() > max_ && tracing) entries_.pop_front();
  context_ = context;
  skipped_ = skipped;
  capture_ = frames ? std::move(capture) : CachingAllocator::CaptureFrames{};
  capturing_.store(frames);
  tracing_.store(tracing);
}

std::vector<TraceEntry> History::entries() const {
  std::lock_guard lock(mutex_);
  return {entries_.begin(), entries_.end()};
}

void History::record(TraceEntry::Action action, const void* addr, std::size_t size, StreamKey stream,
                     const std::shared_ptr<const StackFrames>& frames) {
  TraceEntry e{action, reinterpret_cast<std::uintptr_t>(addr), size, stream,
               std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - epoch_).count(),
               nullptr};
  Context context;
  CachingAllocator::CaptureFrames fn;
  {
    std::lock_guard lock(mutex_);
    if (max_ == 0 || skipped_[static_cast<std::size_t>(action)]) return;
    context = context_;
    if (context == Context::all && is_free(action)) fn = capture_;
  }
  // torch's levels: trace entries carry frames from "alloc" on; frees their own from "all".
  if (fn) e.frames = fn();
  else if (context >= Context::alloc) e.frames = frames;
  std::lock_guard lock(mutex_);
  if (max_ == 0) return;
  entries_.push_back(std::move(e));
  while (entries_.size() > max_) entries_.pop_front();
}

}  // namespace cudakit::memory::detail
