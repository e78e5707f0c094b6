// Recorded allocation traces (tests/data/alloc-traces) replayed through the caching
// allocator's real policy on simulated device memory.

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cudakit/memory/alloc_replay.hpp"
#include "cudakit/memory/alloc_trace.hpp"
#include "cudakit/memory/allocator_config.hpp"
#include "memory/host_allocator_fixture.hpp"
#include "support/paths.hpp"

namespace cudakit::memory {
namespace {

using testing::Fixture;
using testing::kStreamA;

// Replays a recorded trace through the real policy on host memory (work finishing at once).
struct HostReplay {
  ReplayResult result;
  std::int64_t cross_stream_reuses = 0;
  std::size_t peak_requested = 0;
  std::size_t left_in_use = 0;
};
HostReplay replay_on_host(const std::string& trace_name, std::size_t expected_ops, std::uint32_t streams = 1,
                          AllocatorConfig config = {}) {
  const std::string path = cudakit::testing::test_data_dir() + "/alloc-traces/" + trace_name;
  const AllocTrace trace = load_alloc_trace(path);
  EXPECT_EQ(trace.ops.size(), expected_ops);
  EXPECT_EQ(trace.num_streams, streams);
  Fixture f(config);
  struct Target {
    CachingAllocator& a;
    void* alloc(std::size_t n, StreamKey s) { return a.allocate(n, s); }
    void free(void* p, StreamKey) { a.deallocate(p); }
    void empty_cache() { a.empty_cache(); }
    void reset_peaks() { a.reset_peak_stats(); }
    std::size_t peak_allocated() { return static_cast<std::size_t>(a.stats().allocated_bytes[0].peak); }
    std::size_t peak_reserved() { return static_cast<std::size_t>(a.stats().reserved_bytes[0].peak); }
    std::size_t device_allocations() { return static_cast<std::size_t>(a.stats().num_device_alloc); }
  } target{f.allocator};
  HostReplay out;
  std::vector<StreamKey> keys;
  for (std::uint32_t i = 0; i < streams; ++i) keys.push_back(kStreamA * (i + 1));
  out.result = replay_alloc_trace(target, trace, keys);
  out.cross_stream_reuses = f.allocator.stats().num_cross_stream_reuses;
  out.peak_requested = trace.peak_requested_bytes;
  out.left_in_use = f.provider->in_use();
  return out;
}

double reserved_over_allocated(const ReplayResult& r) {
  return static_cast<double>(r.peak_reserved) / static_cast<double>(r.peak_allocated);
}

TEST(AllocReplayHost, ServeKvReplaysWithinItsMemoryBound) {
  const HostReplay h = replay_on_host("trace_serve_kv.csv.gz", 124272);
  EXPECT_EQ(h.result.peak_allocated, h.peak_requested);  // 512-byte multiples already
  // Expandable arenas: 222 MiB for 195 MiB at peak (torch's segments: 314 MiB, 1.61).
  EXPECT_LE(reserved_over_allocated(h.result), 1.15);
  // It churns from its first requests on, so its growths map what is missing plus at most
  // mapped/16 (Note [Growing ahead]): 27 growths.
  EXPECT_LE(h.result.device_allocations, 32u);
  EXPECT_EQ(h.left_in_use, 0u);
}

TEST(AllocReplayHost, GptTrainGrowsFurtherAheadWhileFilling) {
  const HostReplay h = replay_on_host("trace_gpt_train.csv.gz", 10649);
  // Its first step fills 4.2 GiB in growth streaks, at fewer than 8 allocations per mapped page:
  // mapping ahead by mapped/8 there takes 34 growths (53 at mapped/16, 121 without growing
  // ahead) at 1.07 x peak allocated (Note [Growing ahead]).
  EXPECT_LE(h.result.device_allocations, 40u);
  EXPECT_LE(reserved_over_allocated(h.result), 1.10);
  EXPECT_EQ(h.left_in_use, 0u);
}

// The traces with several streams (tests/data/alloc-traces/README.md): memory one stream freed
// serves the others, so that reserved memory stays within 1.15 x peak allocated on each (each
// stream to its own memory holds up to 1.66: See Note [Memory across streams]).
TEST(AllocReplayHost, StreamsShareTheirFreedMemoryOnEveryMultiStreamTrace) {
  struct Case { const char* name; std::size_t ops; std::uint32_t streams; };
  for (const Case& c : {Case{"trace_serve_2w.csv.gz", 751858, 2}, Case{"trace_serve_4w.csv.gz", 632908, 4},
                        Case{"trace_train_copy.csv.gz", 7304, 2}, Case{"trace_train_comm.csv.gz", 6882, 2}}) {
    SCOPED_TRACE(c.name);
    const HostReplay shared = replay_on_host(c.name, c.ops, c.streams);
    EXPECT_LE(reserved_over_allocated(shared.result), 1.15);
    EXPECT_GT(shared.cross_stream_reuses, 0);
    EXPECT_EQ(shared.left_in_use, 0u);
  }
  AllocatorConfig off;
  off.cross_stream_reuse = CrossStreamReuse::off;
  const HostReplay apart = replay_on_host("trace_serve_2w.csv.gz", 751858, 2, off);
  EXPECT_GT(reserved_over_allocated(apart.result), 1.4) << "the two workers' peaks, each in its own arena";
  EXPECT_EQ(apart.cross_stream_reuses, 0);
}

}  // namespace
}  // namespace cudakit::memory
