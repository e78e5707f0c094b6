#include "sanitizer/detail/shadow_memory.hpp"

#include <iterator>

namespace cudakit::sanitizer::detail {

void ShadowMemory::split_at(std::uintptr_t address) {
  auto it = segments_.upper_bound(address);
  if (it == segments_.begin()) return;
  --it;
  if (it->first < address && address < it->second.end) {
    Segment right = it->second;
    it->second.end = address;
    segments_.emplace_hint(std::next(it), address, std::move(right));
  }
}

void ShadowMemory::reset(std::uintptr_t begin, std::uintptr_t end, SegmentState state, std::optional<Access> write) {
  split_at(begin);
  split_at(end);
  segments_.erase(segments_.lower_bound(begin), segments_.lower_bound(end));
  segments_.emplace(begin, Segment{.end = end, .state = state, .write = std::move(write)});
}

namespace {
bool mergeable(const Segment& left, std::uintptr_t right_begin, const Segment& right) {
  return left.end == right_begin && left.state == right.state && left.reads.empty() && right.reads.empty() &&
         left.write.has_value() == right.write.has_value() &&
         (!left.write || (left.write->op == right.write->op && left.write->begin == right.write->begin &&
                          left.write->bytes == right.write->bytes));
}
}  // namespace

void ShadowMemory::coalesce(std::uintptr_t begin, std::uintptr_t end) {
  auto it = segments_.lower_bound(begin);
  if (it != segments_.begin()) --it;  // the left neighbour may merge too
  while (it != segments_.end() && it->first <= end) {
    auto next = std::next(it);
    if (next == segments_.end()) break;
    if (mergeable(it->second, next->first, next->second)) {
      it->second.end = next->second.end;
      segments_.erase(next);
    } else {
      it = next;
    }
  }
}

}  // namespace cudakit::sanitizer::detail
