#pragma once
// History: the allocator's record of allocations, frees and segment changes
// (CachingAllocator::record_history, torch's _record_memory_history), the last `max_entries` of
// them, and the frames of live blocks' allocations.

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "cudakit/memory/caching_allocator.hpp"
#include "cudakit/memory/memory_history_options.hpp"
#include "cudakit/memory/snapshot.hpp"

namespace cudakit::memory::detail {

class [[gnu::visibility("hidden")]] History {
 public:
  // Something is recorded: frames for live blocks, the trace, or both.
  [[nodiscard]] bool enabled() const noexcept {
    return capturing_.load(std::memory_order_relaxed) || tracing_.load(std::memory_order_relaxed);
  }

  // Every allocation and free calls this: the check stays inline and copies nothing, the
  // recording (trace on) is out of line.
  void trace(TraceEntry::Action action, const void* addr, std::size_t size, StreamKey stream,
             const std::shared_ptr<const StackFrames>& frames = nullptr) {
    if (tracing_.load(std::memory_order_relaxed)) [[unlikely]] record(action, addr, size, stream, frames);
  }
  // Sets `frames` to the caller's frames where contexts are recorded with stacks.
  void capture(std::shared_ptr<const StackFrames>& frames) const;

  // Applies `options` (See MemoryHistoryOptions); `capture` gives the frames. Refuses an unknown
  // skip_actions name before changing anything. @throws InvalidArgumentError
  void configure(const MemoryHistoryOptions& options, CachingAllocator::CaptureFrames capture);
  [[nodiscard]] std::vector<TraceEntry> entries() const;

 private:
  using Clock = std::chrono::steady_clock;
  static constexpr std::size_t kActions = static_cast<std::size_t>(TraceEntry::Action::oom) + 1;
  [[gnu::noinline]] void record(TraceEntry::Action action, const void* addr, std::size_t size, StreamKey stream,
                                const std::shared_ptr<const StackFrames>& frames);
  // The capture function where frames are recorded (a copy, taken under the mutex).
  [[nodiscard]] CachingAllocator::CaptureFrames capture_function() const;

  mutable std::mutex mutex_;
  std::atomic<bool> tracing_{false};    // the trace is kept
  std::atomic<bool> capturing_{false};  // live blocks get their allocation's frames
  // Under mutex_:
  std::size_t max_ = 0;
  MemoryHistoryOptions::Context context_ = MemoryHistoryOptions::Context::none;
  std::array<bool, kActions> skipped_{};
  std::deque<TraceEntry> entries_;
  CachingAllocator::CaptureFrames capture_;
  const Clock::time_point epoch_ = Clock::now();
};

}  // namespace cudakit::memory::detail
