// Host tier: the model of torch's caching-allocator policy (what-if replays of snapshots), rule by
// rule, and on recorded traces against the peaks torch itself reported for them.

#include "cudakit/memory/torch_caching_model.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "cudakit/memory/alloc_trace.hpp"
#include "cudakit/memory/allocator_config.hpp"
#include "support/paths.hpp"

namespace cudakit::memory {
namespace {

constexpr std::size_t KiB = std::size_t{1} << 10;
constexpr std::size_t MiB = std::size_t{1} << 20;
constexpr std::size_t GiB = std::size_t{1} << 30;
constexpr std::size_t kUnlimited = std::numeric_limits<std::size_t>::max() / 4;

AllocatorConfig torch_config(const char* text = "") {
  AllocatorConfig c = AllocatorConfig::parse("expandable_segments:False");
  return AllocatorConfig::parse(text, c);
}

TEST(TorchCachingModel, SegmentSizesFollowTorch) {
  TorchCachingModel m(torch_config(), 80 * GiB, kUnlimited);
  const auto small = m.allocate(1000, 0);
  EXPECT_EQ(m.segment_of(small), (std::vector<std::size_t>{1024, 2 * MiB - 1024})) << "512-byte rounding, 2 MiB";
  const auto medium = m.allocate(3 * MiB, 0);
  EXPECT_EQ(m.segment_of(medium), (std::vector<std::size_t>{3 * MiB, 17 * MiB})) << "under 10 MiB: 20 MiB";
  const auto large = m.allocate(30 * MiB + 1, 0);
  // 30 MiB + 512 in a segment of 32 MiB: the rest (2 MiB - 512) is 1 MiB or more, so it is split.
  EXPECT_EQ(m.segment_of(large), (std::vector<std::size_t>{30 * MiB + 512, 2 * MiB - 512}));
  EXPECT_EQ(m.reserved(), 54 * MiB);
  EXPECT_EQ(m.device_allocations(), 3u);
  EXPECT_EQ(m.allocated(), 1024 + 3 * MiB + 30 * MiB + 512);
}

TEST(TorchCachingModel, RoundsAsRoundupPower2DivisionsSay) {
  TorchCachingModel plain(torch_config(), 80 * GiB, kUnlimited);
  EXPECT_EQ(plain.round_size(1), 512u);
  EXPECT_EQ(plain.round_size(513), 1024u);
  EXPECT_EQ(plain.round_size(1200 * KiB + 1), 1200 * KiB + 512);
  TorchCachingModel four(torch_config("roundup_power2_divisions:4"), 80 * GiB, kUnlimited);
  // 1 MiB to 2 MiB in four steps: 1.2 MiB goes to 1.25 MiB.
  EXPECT_EQ(four.round_size(1200 * KiB + 1), 1280 * KiB);
  EXPECT_EQ(four.round_size(2 * MiB), 2 * MiB) << "a power of two stays";
  EXPECT_EQ(four.round_size(1500), 1536u) << "requests up to 512 x divisions round to 512 bytes only";
  // Per interval: [1 MiB, 2 MiB) gets 1 (none), [2 MiB, 4 MiB) gets 2.
  TorchCachingModel listed(torch_config("roundup_power2_divisions:[1:1,2:2,>:4]"), 80 * GiB, kUnlimited);
  EXPECT_EQ(listed.round_size(1200 * KiB + 1), 1200 * KiB + 512);
  EXPECT_EQ(listed.round_size(2 * MiB + 1), 3 * MiB);
}

TEST(TorchCachingModel, TakesTheSmallestFreeBlockOfItsStreamAndPool) {
  TorchCachingModel m(torch_config(), 80 * GiB, kUnlimited);
  // Three segments of their own size on stream 0, freed: 12, 16 and 14 MiB.
  const auto a = m.allocate(12 * MiB, 0);
  const auto b = m.allocate(16 * MiB, 0);
  const auto c = m.allocate(14 * MiB, 0);
  const std::uint64_t at_b = m.address(b), at_c = m.address(c);
  for (auto x : {a, b, c}) m.free(x);
  EXPECT_EQ(m.reserved(), 42 * MiB);
  const auto other_stream = m.allocate(13 * MiB, 1);
  EXPECT_EQ(m.reserved(), 56 * MiB) << "stream 0's cache does not serve stream 1";
  const auto best = m.allocate(13 * MiB, 0);
  EXPECT_EQ(m.address(best), at_c) << "14 MiB is the smallest free block of at least 13 MiB";
  EXPECT_EQ(m.block_size(best), 14 * MiB) << "a remainder of 1 MiB or less is not split off a large block";
  const auto next = m.allocate(15 * MiB, 0);
  EXPECT_EQ(m.address(next), at_b);
  EXPECT_EQ(m.block_size(next), 16 * MiB);
  const auto small = m.allocate(512 * KiB, 0);
  EXPECT_EQ(m.reserved(), 58 * MiB) << "small requests come from 2 MiB segments, never the large pool";
  for (auto x : {other_stream, best, next, small}) m.free(x);
  m.empty_cache();
  EXPECT_EQ(m.reserved(), 0u);
}

TEST(TorchCachingModel, SplitsAndMergesAsTorchDoes) {
  TorchCachingModel m(torch_config(), 80 * GiB, kUnlimited);
  const auto x = m.allocate(4 * MiB, 0);  // 20 MiB segment: 4 + 16
  const auto y = m.allocate(4 * MiB, 0);  // 4 + 4 + 12
  const auto z = m.allocate(4 * MiB, 0);
  EXPECT_EQ(m.segment_of(z), (std::vector<std::size_t>{4 * MiB, 4 * MiB, 4 * MiB, 8 * MiB}));
  m.free(y);
  EXPECT_EQ(m.segment_of(z), (std::vector<std::size_t>{4 * MiB, 4 * MiB, 4 * MiB, 8 * MiB})) << "neighbours in use";
  m.free(z);
  EXPECT_EQ(m.segment_of(x), (std::vector<std::size_t>{4 * MiB, 16 * MiB})) << "merged with both free neighbours";
  m.empty_cache();
  EXPECT_EQ(m.reserved(), 20 * MiB) << "a segment with a block in use stays";
  m.free(x);
  m.empty_cache();
  EXPECT_EQ(m.reserved(), 0u);
}

TEST(TorchCachingModel, MaxSplitSizeKeepsOversizeBlocksWhole) {
  TorchCachingModel m(torch_config("max_split_size_mb:64"), 80 * GiB, kUnlimited);
  const auto big = m.allocate(100 * MiB, 0);
  const std::uint64_t at = m.address(big);
  m.free(big);
  const auto smaller = m.allocate(30 * MiB, 0);
  EXPECT_NE(m.address(smaller), at) << "a request under max_split_size does not take an oversize block";
  const auto close = m.allocate(90 * MiB, 0);
  EXPECT_EQ(m.address(close), at) << "an oversize request within 20 MiB of it takes it whole";
  EXPECT_EQ(m.block_size(close), 100 * MiB);
  m.free(close);
  const auto far = m.allocate(70 * MiB, 0);
  EXPECT_NE(m.address(far), at) << "30 MiB would be wasted: more than max_non_split_rounding";
}

TEST(TorchCachingModel, ReleasesTheCacheAndRetriesWhenMemoryRunsOut) {
  TorchCachingModel m(torch_config(), 40 * MiB, 40 * MiB);
  m.free(m.allocate(3 * MiB, 0));  // 20 MiB cached on stream 0
  const auto other = m.allocate(30 * MiB, 1);
  ASSERT_NE(other, TorchCachingModel::kNoBlock) << "stream 0's cached segment is returned and the request retried";
  EXPECT_EQ(m.retries(), 1u);
  EXPECT_EQ(m.reserved(), 30 * MiB);
  EXPECT_EQ(m.peak_reserved(), 30 * MiB) << "the release comes before the new segment";
  EXPECT_EQ(m.allocate(12 * MiB, 1), TorchCachingModel::kNoBlock) << "30 + 12 MiB exceed 40 MiB";
  EXPECT_EQ(m.allocate(8 * MiB, 1), TorchCachingModel::kNoBlock) << "under 10 MiB takes a 20 MiB segment";
  EXPECT_NE(m.allocate(1 * MiB, 1), TorchCachingModel::kNoBlock) << "a small request, a 2 MiB segment";
}

TEST(TorchCachingModel, DeferredFreesKeepTheirBlockUntilTheyComplete) {
  TorchCachingModel m(torch_config(), 80 * GiB, kUnlimited);
  const auto a = m.allocate(12 * MiB, 0);
  const std::uint64_t at = m.address(a);
  const auto ticket = m.free(a, true);
  EXPECT_EQ(m.allocated(), 0u) << "allocated bytes drop at the free, as in torch";
  const auto b = m.allocate(12 * MiB, 0);
  const std::uint64_t at_b = m.address(b);
  EXPECT_NE(at_b, at) << "the block waits for the other streams";
  m.complete_free(ticket);
  m.free(b);
  const auto c = m.allocate(12 * MiB, 0);
  EXPECT_EQ(m.address(c), std::min(at, at_b)) << "both reusable once complete: the lowest address first";
  m.complete_free(ticket);  // a second completion does nothing
  EXPECT_EQ(m.reserved(), 24 * MiB);
}

TEST(TorchCachingModel, ExpandableSegmentsMapPagesOnDemand) {
  TorchCachingModel m(torch_config("expandable_segments:True"), 80 * GiB, kUnlimited);
  const auto a = m.allocate(3 * MiB, 0);
  EXPECT_EQ(m.reserved(), 20 * MiB) << "large pages are large_segment_size (20 MiB)";
  const auto b = m.allocate(25 * MiB, 0);
  EXPECT_EQ(m.reserved(), 40 * MiB) << "the free 17 MiB at the end grows by one page";
  EXPECT_EQ(m.address(b), m.address(a) + 3 * MiB) << "one range per stream: b follows a";
  const auto s = m.allocate(1000, 0);
  EXPECT_EQ(m.reserved(), 42 * MiB) << "small pages are 2 MiB";
  const auto other = m.allocate(3 * MiB, 1);
  EXPECT_EQ(m.reserved(), 62 * MiB) << "each stream has its own range";
  m.free(a);
  m.empty_cache();
  EXPECT_EQ(m.reserved(), 62 * MiB) << "a's 3 MiB lies in a page b still uses";
  for (auto x : {b, s, other}) m.free(x);
  m.empty_cache();
  EXPECT_EQ(m.reserved(), 0u) << "free pages are unmapped";
  EXPECT_EQ(m.peak_reserved(), 62 * MiB);
}

TEST(TorchCachingModel, GarbageCollectionActsUnderAMemoryFraction) {
  // 100 MiB device, fraction 0.5: 50 MiB allowed; collection above 0.5 of it, 25 MiB.
  TorchCachingModel m(torch_config("per_process_memory_fraction:0.5,garbage_collection_threshold:0.5"), 100 * MiB,
                      kUnlimited);
  m.free(m.allocate(12 * MiB, 0));
  m.free(m.allocate(14 * MiB, 0));  // the 12 MiB block is too small: a second segment
  EXPECT_EQ(m.reserved(), 26 * MiB);
  const auto c = m.allocate(16 * MiB, 0);
  ASSERT_NE(c, TorchCachingModel::kNoBlock);
  EXPECT_LT(m.reserved(), 42 * MiB) << "cached blocks were collected before the new segment";
  EXPECT_EQ(m.allocate(36 * MiB, 0), TorchCachingModel::kNoBlock) << "beyond the fraction's 50 MiB";
  TorchCachingModel no_fraction(torch_config("garbage_collection_threshold:0.5"), 100 * MiB, kUnlimited);
  no_fraction.free(no_fraction.allocate(12 * MiB, 0));
  no_fraction.free(no_fraction.allocate(14 * MiB, 0));
  (void)no_fraction.allocate(16 * MiB, 0);
  EXPECT_EQ(no_fraction.reserved(), 42 * MiB) << "torch collects only under a memory fraction";
}

// The recorded single-stream traces, replayed on this model, against the peaks torch's own
// allocator reported when they were recorded (tests/data/alloc-traces/README.md: gpt_train
// 4940 / 4209 MiB reserved / allocated, serve_kv 314 / 195 MiB).
TEST(TorchCachingModel, ReplaysRecordedTracesToTheirReportedPeaks) {
  struct Case {
    const char* name;
    double reserved_mib, allocated_mib;
  };
  for (const Case& c : {Case{"trace_gpt_train.csv.gz", 4940, 4209}, Case{"trace_serve_kv.csv.gz", 314, 195}}) {
    SCOPED_TRACE(c.name);
    const AllocTrace trace = load_alloc_trace(cudakit::testing::test_data_dir() + "/alloc-traces/" + c.name);
    TorchCachingModel m(torch_config(), 141 * GiB, kUnlimited);
    std::vector<TorchCachingModel::BlockId> live(trace.num_ids, TorchCachingModel::kNoBlock);
    for (const AllocTraceOp& op : trace.ops) {
      if (op.is_alloc) {
        live[op.slot] = m.allocate(op.size, op.stream);
        ASSERT_NE(live[op.slot], TorchCachingModel::kNoBlock);
      } else {
        m.free(live[op.slot]);
      }
    }
    EXPECT_NEAR(static_cast<double>(m.peak_reserved()) / MiB, c.reserved_mib, c.reserved_mib * 0.01);
    EXPECT_NEAR(static_cast<double>(m.peak_allocated()) / MiB, c.allocated_mib, c.allocated_mib * 0.01);
  }
}

}  // namespace
}  // namespace cudakit::memory
