#pragma once
// History: the allocator's record of allocations, frees and segment changes
// (CachingAllocator::record_history), the last `max_entries` of them.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "cudakit/memory/caching_allocator.hpp"
#include "cudakit/memory/snapshot.hpp"

namespace cudakit::memory::detail {

class [[gnu::visibility("hidden")]] History {
 public:
  [[nodiscard]] bool enabled() const noexcept { return enabled_.load(std::memory_order_relaxed); }

  // Every allocation and free calls this: the check stays inline and copies nothing, the
  // recording (history on) is out of line.
  void trace(TraceEntry::Action action, const void* addr, std::size_t size, StreamKey stream,
             const std::shared_ptr<const StackFrames>& frames = nullptr) {
    if (enabled()) [[unlikely]] record(action, addr, size, stream, frames);
  }
  // Sets `frames` to the caller's frames where a capture function was given.
  void capture(std::shared_ptr<const StackFrames>& frames) const {
    if (capture_) frames = capture_();
  }

  void configure(bool enabled, std::size_t max_entries, CachingAllocator::CaptureFrames capture);
  [[nodiscard]] std::vector<TraceEntry> entries() const;

 private:
  using Clock = std::chrono::steady_clock;
  [[gnu::noinline]] void record(TraceEntry::Action action, const void* addr, std::size_t size, StreamKey stream,
                                const std::shared_ptr<const StackFrames>& frames);

  mutable std::mutex mutex_;
  std::atomic<bool> enabled_{false};
  std::size_t max_ = 0;
  std::deque<TraceEntry> entries_;
  CachingAllocator::CaptureFrames capture_;
  const Clock::time_point epoch_ = Clock::now();
};

}  // namespace cudakit::memory::detail
