// RangeRecorder: NVTX ranges from the trace hooks become the profiler's host-timeline ranges.

#include "profiler/detail/range_recorder.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace {

using cudakit::TraceEvent;
using cudakit::TraceEventKind;
using cudakit::profiler::RangeEvent;
using cudakit::profiler::detail::RangeRecorder;

struct Recorded {
  std::uint64_t now = 100;
  std::vector<RangeEvent> ranges;
  RangeRecorder recorder{[this] { return now++; }, [this](RangeEvent r) { ranges.push_back(std::move(r)); }};
};

TEST(RangeRecorder, NestedPushesCloseInnermostFirstPerThread) {
  Recorded r;
  r.recorder.on_event({.kind = TraceEventKind::range_push, .name = "outer"}, 1);
  r.recorder.on_event({.kind = TraceEventKind::range_push, .name = "other thread"}, 2);
  r.recorder.on_event({.kind = TraceEventKind::range_push, .name = "inner"}, 1);
  r.recorder.on_event({.kind = TraceEventKind::range_pop}, 1);
  r.recorder.on_event({.kind = TraceEventKind::range_pop}, 2);
  r.recorder.on_event({.kind = TraceEventKind::range_pop}, 1);
  ASSERT_EQ(r.ranges.size(), 3u);
  EXPECT_EQ(r.ranges[0].name, "inner");
  EXPECT_EQ(r.ranges[0].start_ns, 102u);
  EXPECT_EQ(r.ranges[0].end_ns, 103u);
  EXPECT_EQ(r.ranges[0].thread, 1u);
  EXPECT_EQ(r.ranges[1].name, "other thread");
  EXPECT_EQ(r.ranges[1].thread, 2u);
  EXPECT_EQ(r.ranges[2].name, "outer");
  EXPECT_EQ(r.ranges[2].start_ns, 100u);
  EXPECT_EQ(r.ranges[2].end_ns, 105u);
}

TEST(RangeRecorder, StartedRangesEndByIdOnAnyThread) {
  Recorded r;
  r.recorder.on_event({.kind = TraceEventKind::range_start, .name = "a", .range_id = 7}, 1);
  r.recorder.on_event({.kind = TraceEventKind::range_start, .name = "b", .range_id = 8}, 1);
  r.recorder.on_event({.kind = TraceEventKind::range_end, .range_id = 7}, 3);
  ASSERT_EQ(r.ranges.size(), 1u);
  EXPECT_EQ(r.ranges[0].name, "a");
  EXPECT_EQ(r.ranges[0].thread, 3u);
}

TEST(RangeRecorder, UnmatchedPopsAndEndsAndOtherKindsAreDropped) {
  Recorded r;
  r.recorder.on_event({.kind = TraceEventKind::range_pop}, 1);
  r.recorder.on_event({.kind = TraceEventKind::range_end, .range_id = 5}, 1);
  r.recorder.on_event({.kind = TraceEventKind::kernel_launch, .name = "k"}, 1);
  EXPECT_TRUE(r.ranges.empty());
}

}  // namespace
