#pragma once
// ShadowMemory: the sanitizer's state of every byte range it has seen touched, as an interval
// map from a range's first byte to a Segment (its end, last write, reads since, allocation
// state). Ranges split where accesses begin and end inside them and merge again after a write
// covers them, so a buffer used whole stays one segment.

#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "cudakit/core/trace_event.hpp"

namespace cudakit::sanitizer::detail {

// One operation, shared by the accesses it made (kept while some range still names it).
struct Operation {
  std::uint64_t id = 0;
  TraceEventKind kind = TraceEventKind::kernel_launch;
  const char* name = nullptr;  // static storage (the trace event's)
  cudaStream_t stream = nullptr;
  std::uint64_t time_ns = 0;
  std::uint32_t stack = 0;     // the detector's StackTable id (0: none)
};
using OperationPtr = std::shared_ptr<const Operation>;

// One argument's access by one operation.
struct Access {
  std::uint32_t stream = 0;  // the detector's stream index
  std::uint64_t clock = 0;   // the stream's clock at the operation
  OperationPtr op;
  std::uintptr_t begin = 0;  // the argument's whole range, for reports
  std::size_t bytes = 0;
  const char* argument = nullptr;
  MemoryAccess::Mode mode = MemoryAccess::Mode::read;
};

enum class SegmentState : std::uint8_t { untracked, allocated, freed };

struct Segment {
  std::uintptr_t end = 0;
  SegmentState state = SegmentState::untracked;
  std::optional<Access> write;  // freed: the free
  std::vector<Access> reads;    // since the write, the latest of each stream

  void add_read(const Access& a) {
    for (Access& r : reads) {
      if (r.stream == a.stream) {
        r = a;
        return;
      }
    }
    reads.push_back(a);
  }
};

class ShadowMemory {
 public:
  // Calls visit(begin, segment) for each segment of [begin, end), in address order, first
  // creating untracked segments for the bytes no segment covers.
  template <class Visit>
  void for_each(std::uintptr_t begin, std::uintptr_t end, Visit&& visit) {
    split_at(begin);
    split_at(end);
    auto it = segments_.lower_bound(begin);
    std::uintptr_t cursor = begin;
    while (cursor < end) {
      if (it == segments_.end() || it->first > cursor) {
        const std::uintptr_t gap_end = it == segments_.end() ? end : std::min(end, it->first);
        it = segments_.emplace_hint(it, cursor, Segment{.end = gap_end});
      }
      visit(it->first, it->second);
      cursor = it->second.end;
      ++it;
    }
  }
  // The same over the segments that exist only (no gaps filled).
  template <class Visit>
  void for_each_existing(std::uintptr_t begin, std::uintptr_t end, Visit&& visit) {
    split_at(begin);
    split_at(end);
    for (auto it = segments_.lower_bound(begin); it != segments_.end() && it->first < end; ++it) {
      visit(it->first, it->second);
    }
  }
  // [begin, end) becomes one segment in `state`, written by `write` (or by nobody).
  void reset(std::uintptr_t begin, std::uintptr_t end, SegmentState state, std::optional<Access> write);
  // Merges neighbours in and around [begin, end) that hold the same write, no reads and the
  // same state.
  void coalesce(std::uintptr_t begin, std::uintptr_t end);
  [[nodiscard]] std::size_t size() const noexcept { return segments_.size(); }

 private:
  void split_at(std::uintptr_t address);
  std::map<std::uintptr_t, Segment> segments_;
};

}  // namespace cudakit::sanitizer::detail
