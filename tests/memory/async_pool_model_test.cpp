// Host tier: the cudaMallocAsync-like pool of what-if replays (Note [A model of cudaMallocAsync's
// pool]): granules mapped on demand, freed memory kept and reused, released before failing.

#include "cudakit/memory/async_pool_model.hpp"

#include <gtest/gtest.h>

namespace cudakit::memory {
namespace {

constexpr std::uint64_t MiB = std::uint64_t{1} << 20;
constexpr std::size_t kPlenty = std::size_t{1} << 40;

TEST(AsyncPoolModel, MapsTwoMiBGranulesOnDemand) {
  AsyncPoolModel pool(kPlenty);
  const auto a = pool.allocate(1000);
  EXPECT_EQ(pool.reserved(), 2 * MiB);
  EXPECT_EQ(pool.allocated(), 1024u) << "512-byte rounding";
  const auto b = pool.allocate(2 * MiB);  // from 1 KiB to 2 MiB + 1 KiB: one more granule
  EXPECT_EQ(b, a + 1024);
  EXPECT_EQ(pool.reserved(), 4 * MiB);
  pool.free(a);
  pool.free(b);
  EXPECT_EQ(pool.reserved(), 4 * MiB) << "freed memory stays in the pool until a synchronization";
  pool.trim();
  EXPECT_EQ(pool.reserved(), 0u);
  EXPECT_EQ(pool.peak_reserved(), 4 * MiB);
}

TEST(AsyncPoolModel, ReusesTheBestFittingFreeRange) {
  AsyncPoolModel pool(kPlenty);
  const auto a = pool.allocate(10 * MiB);
  const auto keep = pool.allocate(1 * MiB);
  const auto c = pool.allocate(7 * MiB);
  const auto keep2 = pool.allocate(1 * MiB);
  pool.free(a);
  pool.free(c);
  EXPECT_EQ(pool.allocate(6 * MiB), c) << "7 MiB is the smallest free range that fits";
  EXPECT_EQ(pool.allocate(9 * MiB), a);
  EXPECT_EQ(pool.reserved(), 20 * MiB) << "no growth: everything reused";
  pool.free(keep);
  pool.free(keep2);
}

TEST(AsyncPoolModel, ReleasesUnusedMemoryBeforeFailing) {
  AsyncPoolModel pool(10 * MiB);
  const auto a = pool.allocate(4 * MiB);
  const auto b = pool.allocate(4 * MiB);
  pool.free(a);
  // 6 MiB fit no free range: at the end they need 3 granules, 14 MiB mapped in all. The pool
  // unmaps a's granules first, and the request fits in 10 MiB.
  EXPECT_NE(pool.allocate(6 * MiB), AsyncPoolModel::kFailed);
  EXPECT_EQ(pool.trims(), 1u);
  EXPECT_EQ(pool.reserved(), 10 * MiB);
  EXPECT_EQ(pool.allocate(4 * MiB), AsyncPoolModel::kFailed) << "live memory fills the device";
  EXPECT_EQ(pool.reserved(), 10 * MiB) << "a failure maps nothing";
  pool.free(b);
}

}  // namespace
}  // namespace cudakit::memory
