#include "nccl/detail/segment_registrations.hpp"

#include <utility>

namespace cudakit::nccl::detail {

SegmentRegistrations::SegmentRegistrations(memory::CachingAllocator& allocator, Register register_range,
                                           Deregister deregister_range)
    : allocator_(allocator), register_(std::move(register_range)), deregister_(std::move(deregister_range)) {
  observer_ = allocator_.attach_segment_observer([this](const memory::SegmentEvent& e) { on_event(e); });
}

SegmentRegistrations::~SegmentRegistrations() { close(); }

void SegmentRegistrations::close() noexcept {
  // Detached first: once detach returns, no event is in flight, so what is left stays left.
  if (const std::uint64_t id = std::exchange(observer_, 0); id != 0) {
    try {
      allocator_.detach_segment_observer(id);
    } catch (...) {  // attached by this object: cannot be missing
    }
  }
  std::lock_guard lock(mutex_);
  for (const auto& [base, entry] : entries_) deregister_(entry.handle);
  entries_.clear();
}

std::vector<RegisteredSegment> SegmentRegistrations::segments() const {
  std::lock_guard lock(mutex_);
  std::vector<RegisteredSegment> out;
  out.reserve(entries_.size());
  for (const auto& [base, entry] : entries_) out.push_back({reinterpret_cast<void*>(base), entry.bytes});
  return out;
}

void SegmentRegistrations::on_event(const memory::SegmentEvent& event) noexcept {
  const auto base = reinterpret_cast<std::uintptr_t>(event.base);
  std::lock_guard lock(mutex_);
  if (event.kind == memory::SegmentEvent::Kind::mapped) {
    if (entries_.contains(base)) return;  // reported again by attach's replay
    if (void* handle = register_(event.base, event.bytes)) entries_.emplace(base, Entry{event.bytes, handle});
    return;
  }
  // Unmapping: every registration inside the range goes (one, as the allocator maps and unmaps
  // ranges alike).
  auto it = entries_.lower_bound(base);
  while (it != entries_.end() && it->first < base + event.bytes) {
    deregister_(it->second.handle);
    it = entries_.erase(it);
  }
}

}  // namespace cudakit::nccl::detail
