// Host tier: what-if replays of a snapshot's trace under the four allocators (Note [What-if
// replays]): peaks, the first failure within a capacity, deferred frees, empty_cache calls.

#include "cudakit/memory/what_if_replay.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "support/paths.hpp"

namespace cudakit::memory {
namespace {

constexpr std::uint64_t MiB = std::uint64_t{1} << 20;

SnapshotDeviceTrace small_trace() {
  return load_snapshot_trace(cudakit::testing::test_data_dir() + "/memory/whatif_small.pickle").devices.at(0);
}

WhatIfOptions options(std::optional<std::size_t> capacity = {}) {
  WhatIfOptions o;
  o.torch_config = AllocatorConfig::parse("expandable_segments:False");
  o.capacity = capacity;
  if (capacity) o.device_memory = *capacity;
  return o;
}

std::string entry(const char* action, std::uint64_t addr, std::uint64_t size) {
  return "{\"action\": \"" + std::string(action) + "\", \"addr\": " + std::to_string(addr) + ", \"size\": " +
         std::to_string(size) + ", \"stream\": 7}";
}
SnapshotDeviceTrace json_trace(const std::vector<std::string>& entries) {
  std::string list;
  for (const std::string& e : entries) list += (list.empty() ? "" : ",") + e;
  return parse_snapshot_trace("{\"segments\": [], \"device_traces\": [[" + list + "]]}", "t").devices.at(0);
}

TEST(WhatIfReplay, GivesEachAllocatorItsPeaks) {
  const SnapshotDeviceTrace d = small_trace();
  const auto rows = replay_what_if(d, options());
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].allocator, WhatIfAllocator::cudakit);
  EXPECT_EQ(rows[1].allocator, WhatIfAllocator::torch_segments);
  EXPECT_EQ(rows[2].allocator, WhatIfAllocator::torch_expandable);
  EXPECT_EQ(rows[3].allocator, WhatIfAllocator::async_pool);
  for (const WhatIfRow& r : rows) {
    SCOPED_TRACE(to_string(r.allocator));
    EXPECT_FALSE(r.stopped.has_value());
    EXPECT_FALSE(r.first_failure.has_value()) << "no capacity asked";
    EXPECT_GE(r.peak_allocated, d.peak_requested_bytes);
    EXPECT_GE(r.peak_reserved, r.peak_allocated);
  }
  // torch's segments: A's 20 MiB (the seeds, then the 2 MiB), B's 2 MiB small segment and its
  // 20 MiB one for the 6 and 5 MiB blocks; the 10 MiB request later fits A's free 13 MiB.
  EXPECT_EQ(rows[1].peak_reserved, 42 * MiB);
  EXPECT_EQ(rows[1].device_allocations, 3u);
}

TEST(WhatIfReplay, FindsTheFirstOperationThatDoesNotFit) {
  const SnapshotDeviceTrace d = small_trace();
  const auto rows = replay_what_if(d, options(30 * MiB));
  // torch's policy needs a third segment of 20 MiB on stream B for entry 6's 6 MiB, while A's
  // segment holds a block allocated before the trace and the small segment one of B's.
  for (const WhatIfRow& r : {rows[1], rows[2]}) {
    SCOPED_TRACE(to_string(r.allocator));
    ASSERT_TRUE(r.first_failure.has_value());
    EXPECT_EQ(r.first_failure->op, 5u);
    EXPECT_EQ(r.first_failure->what.entry, 6u);
    EXPECT_EQ(r.first_failure->what.size, 6 * MiB);
    EXPECT_LE(r.peak_reserved_within_capacity, 30 * MiB);
  }
  // The pool: 4 + 3 MiB before the trace, 2 MiB after them; the 4 KiB block in the first seed's
  // place, 6 and 5 MiB at the end (no free range fits them): 20 MiB mapped.
  EXPECT_FALSE(rows[3].first_failure.has_value());
  EXPECT_EQ(rows[3].peak_reserved, 20 * MiB);
  const auto roomy = replay_what_if(d, options(64 * MiB));
  for (const WhatIfRow& r : roomy) EXPECT_FALSE(r.first_failure.has_value()) << to_string(r.allocator);
}

TEST(WhatIfReplay, DeferredFreesHoldTheirMemoryInTheTorchRows) {
  const std::uint64_t a = 1 << 30, b = 2u << 30;
  // 12 MiB freed with record_stream: its free completes only after the next allocation.
  const SnapshotDeviceTrace d = json_trace({entry("alloc", a, 12 * MiB), entry("free_requested", a, 12 * MiB),
                                            entry("alloc", b, 12 * MiB), entry("free_completed", a, 12 * MiB),
                                            entry("free_requested", b, 12 * MiB), entry("free_completed", b, 12 * MiB)});
  const auto rows = replay_what_if(d, options());
  EXPECT_EQ(rows[1].peak_reserved, 24 * MiB) << "torch: the block waits, a second segment";
  EXPECT_EQ(rows[1].peak_allocated, 12 * MiB);
  EXPECT_EQ(rows[3].peak_reserved, 12 * MiB) << "the pool reuses it at the free";
}

TEST(WhatIfReplay, ReplaysEmptyCacheCalls) {
  const std::uint64_t a = 1 << 30, b = 2u << 30;
  const auto trace = [&](bool emptied) {
    std::vector<std::string> e = {entry("segment_alloc", a, 12 * MiB), entry("alloc", a, 12 * MiB),
                                  entry("free_requested", a, 12 * MiB), entry("free_completed", a, 12 * MiB)};
    if (emptied) e.push_back(entry("segment_free", a, 12 * MiB));
    e.push_back(entry("segment_alloc", b, 30 * MiB));
    e.push_back(entry("alloc", b, 30 * MiB));
    return json_trace(e);
  };
  EXPECT_EQ(replay_what_if(trace(true), options())[1].peak_reserved, 30 * MiB);
  EXPECT_EQ(replay_what_if(trace(false), options())[1].peak_reserved, 42 * MiB);
}

TEST(WhatIfReplay, StopsWhereAMemoryFractionRunsOut) {
  WhatIfOptions o = options();
  o.device_memory = 100 * MiB;
  o.torch_config = AllocatorConfig::parse("expandable_segments:False,per_process_memory_fraction:0.2");
  const auto rows = replay_what_if(small_trace(), o);
  ASSERT_TRUE(rows[1].stopped.has_value()) << "20 MiB allowed";
  EXPECT_EQ(rows[1].stopped->what.entry, 4u) << "the small segment would pass 20 MiB";
  EXPECT_FALSE(rows[3].stopped.has_value()) << "the pool knows no fraction";
}

}  // namespace
}  // namespace cudakit::memory
