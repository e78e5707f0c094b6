#include "memory/detail/history.hpp"

namespace cudakit::memory::detail {

void History::configure(bool enabled, std::size_t max_entries, CachingAllocator::CaptureFrames capture) {
  std::lock_guard lock(mutex_);
  max_ = enabled ? max_entries : 0;
  capture_ = enabled ? std::move(capture) : CachingAllocator::CaptureFrames{};
  if (!enabled) entries_.clear();
  enabled_.store(enabled);
}

std::vector<TraceEntry> History::entries() const {
  std::lock_guard lock(mutex_);
  return {entries_.begin(), entries_.end()};
}

void History::record(TraceEntry::Action action, const void* addr, std::size_t size, StreamKey stream,
                     const std::shared_ptr<const StackFrames>& frames) {
  TraceEntry e{action, reinterpret_cast<std::uintptr_t>(addr), size, stream,
               std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - epoch_).count(),
               frames};
  std::lock_guard lock(mutex_);
  if (max_ == 0) return;
  entries_.push_back(std::move(e));
  while (entries_.size() > max_) entries_.pop_front();
}

}  // namespace cudakit::memory::detail
