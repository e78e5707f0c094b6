// A stream's marks: which frees they cover, and when a look at the stream could tell anything new
// (See Note [A mark with nothing to cover]), with simulated events whose completion the test decides.

#include "memory/detail/stream_marks.hpp"

#include <gtest/gtest.h>

#include "cudakit/memory/host_segment_provider.hpp"

namespace cudakit::memory::detail {
namespace {

constexpr StreamKey kStream = 0x10;

TEST(StreamMarks, ALookHasNewsOnlyWhileAStampWaitsOrAMarkIsInFlight) {
  HostStreamEvents events(/*auto_complete=*/false);  // work finishes when the test says
  StreamMarks marks;
  EXPECT_FALSE(marks.has_news_to_find()) << "nothing stamped yet";
  const std::uint64_t first = marks.stamp_use();  // a free
  EXPECT_TRUE(marks.has_news_to_find());
  EXPECT_FALSE(marks.poll(events, kStream, first, true)) << "the stream is not known idle: a mark goes in flight";
  EXPECT_TRUE(marks.in_flight_covers(first));
  EXPECT_TRUE(marks.has_news_to_find()) << "the mark in flight may complete";
  EXPECT_FALSE(marks.poll(events, kStream, first, true)) << "not complete yet";
  events.complete_all();
  EXPECT_TRUE(marks.poll(events, kStream, first, true));
  EXPECT_TRUE(marks.covers(first));
  EXPECT_FALSE(marks.in_flight());
  EXPECT_FALSE(marks.has_news_to_find()) << "every stamp is covered: a look would learn nothing";
  // A free after the mark took its index waits for the next mark.
  const std::uint64_t second = marks.stamp_use();
  EXPECT_FALSE(marks.covers(second));
  EXPECT_TRUE(marks.has_news_to_find());
  EXPECT_FALSE(marks.poll(events, kStream, second, true));
  events.complete_all();
  EXPECT_TRUE(marks.poll(events, kStream, second, true));
  EXPECT_FALSE(marks.has_news_to_find());
  // stamp() alone (what a look asks for) is no news.
  (void)marks.stamp();
  EXPECT_FALSE(marks.has_news_to_find());
  marks.release(events);
}

TEST(StreamMarks, AnIdleStreamCoversItsStampsAtOnce) {
  HostStreamEvents events(/*auto_complete=*/true);  // idle() says yes
  StreamMarks marks;
  const std::uint64_t stamp = marks.stamp_use();
  EXPECT_TRUE(marks.poll(events, kStream, stamp, true));
  EXPECT_FALSE(marks.in_flight());
  EXPECT_FALSE(marks.has_news_to_find());
  EXPECT_EQ(events.live_tokens(), 0u) << "no event was recorded for an idle stream";
}

}  // namespace
}  // namespace cudakit::memory::detail
