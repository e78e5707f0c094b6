// Host tier: a held pool keeps its cached memory through empty_cache(), the out-of-memory retry
// and the garbage-collection threshold (See Note [A graph's pool keeps its free memory]), and
// gives it back once its holds are gone.

#include <gtest/gtest.h>

#include "cudakit/core/error.hpp"
#include "cudakit/memory/caching_allocator.hpp"
#include "memory/host_allocator_fixture.hpp"

namespace cudakit::memory {
namespace {

using namespace testing;  // Fixture, kStreamA/B, MiB (memory/host_allocator_fixture.hpp)

class PoolHolds : public ::testing::TestWithParam<bool> {
 protected:
  static AllocatorConfig config() {
    AllocatorConfig c;
    c.expandable_segments = GetParam();
    return c;
  }
};
INSTANTIATE_TEST_SUITE_P(Expandable, PoolHolds, ::testing::Bool());

// What a capture leaves in its pool: a workspace it allocated and freed before it ended.
void* freed_workspace(CachingAllocator& a, PoolId pool, std::size_t bytes) {
  void* p = a.allocate(bytes, kStreamA, pool);
  a.deallocate(p);
  return p;
}

TEST_P(PoolHolds, EmptyCacheKeepsAHeldPoolsFreeMemoryUntilTheLastHoldGoes) {
  Fixture f(config());
  const PoolId pool = CachingAllocator::new_pool_id();
  f.allocator.create_pool(pool);
  f.allocator.hold_pool(pool);
  f.allocator.hold_pool(pool);  // two graphs share the pool
  void* workspace = freed_workspace(f.allocator, pool, 32 * MiB);
  void* outside = f.allocator.allocate(8 * MiB, kStreamB);
  f.allocator.deallocate(outside);
  const std::size_t held = f.allocator.pool_reserved_bytes(pool);
  ASSERT_GE(held, 32 * MiB);

  f.allocator.empty_cache();
  EXPECT_EQ(f.allocator.pool_reserved_bytes(pool), held) << "a graph still reads and writes the freed workspace";
  EXPECT_EQ(f.allocator.pool_reserved_bytes(PoolId{}), 0u) << "other pools' cache goes as before";
  EXPECT_EQ(f.allocator.allocate(32 * MiB, kStreamA, pool), workspace) << "the same memory, still the pool's";
  f.allocator.deallocate(workspace);

  f.allocator.release_pool_hold(pool);
  f.allocator.empty_cache();
  EXPECT_EQ(f.allocator.pool_reserved_bytes(pool), held) << "one hold is left";
  f.allocator.release_pool_hold(pool);
  f.allocator.release_pool_hold(pool);  // one too many: nothing
  f.allocator.empty_cache();
  EXPECT_EQ(f.allocator.pool_reserved_bytes(pool), 0u);
  f.allocator.release_pool(pool);
}

TEST_P(PoolHolds, ReleasePoolReturnsAHeldPoolsMemory) {
  Fixture f(config());
  const PoolId pool = CachingAllocator::new_pool_id();
  f.allocator.create_pool(pool);
  f.allocator.hold_pool(pool);
  (void)freed_workspace(f.allocator, pool, 16 * MiB);
  f.allocator.release_pool(pool);  // its owner is done with it, holds or not
  f.allocator.release_pool_hold(pool);  // the hold's end after the pool's: nothing to do
  EXPECT_EQ(f.allocator.pool_reserved_bytes(pool), 0u);
  EXPECT_EQ(f.allocator.stats().reserved_bytes[0].current, 0);
}

TEST_P(PoolHolds, TheOutOfMemoryRetryLeavesAHeldPoolAlone) {
  Fixture f(config(), 256 * MiB);
  f.allocator.set_memory_fraction(0.5);  // 128 MiB
  const PoolId pool = CachingAllocator::new_pool_id();
  f.allocator.create_pool(pool);
  f.allocator.hold_pool(pool);
  (void)freed_workspace(f.allocator, pool, 64 * MiB);
  const std::size_t held = f.allocator.pool_reserved_bytes(pool);
  EXPECT_THROW((void)f.allocator.allocate(100 * MiB, kStreamA), OutOfMemoryError);
  EXPECT_EQ(f.allocator.pool_reserved_bytes(pool), held);
  f.allocator.release_pool_hold(pool);
  void* fits = f.allocator.allocate(100 * MiB, kStreamA);  // the retry may take it now
  EXPECT_NE(fits, nullptr);
  EXPECT_EQ(f.allocator.pool_reserved_bytes(pool), 0u);
  f.allocator.deallocate(fits);
  f.allocator.release_pool(pool);
}

TEST_P(PoolHolds, GarbageCollectionLeavesAHeldPoolAlone) {
  AllocatorConfig c = config();
  c.garbage_collection_threshold = 0.5;
  Fixture f(c, 256 * MiB);
  const PoolId pool = CachingAllocator::new_pool_id();
  f.allocator.create_pool(pool);
  f.allocator.hold_pool(pool);
  void* live = f.allocator.allocate(60 * MiB, kStreamA, pool);
  (void)freed_workspace(f.allocator, pool, 40 * MiB);  // its own segment, or the arena's free tail
  const std::size_t released_before = f.provider->release_calls();
  // Past the threshold (100 + 90 MiB of 128): an unheld pool would return its cache first.
  void* more = f.allocator.allocate(90 * MiB, kStreamA, pool);
  EXPECT_EQ(f.provider->release_calls(), released_before) << "nothing of the held pool went back";
  f.allocator.deallocate(more);
  f.allocator.deallocate(live);
  f.allocator.release_pool_hold(pool);
  f.allocator.release_pool(pool);
}

TEST(PoolHoldsErrors, HoldingAPoolThatDoesNotExistIsRefused) {
  Fixture f;
  const PoolId pool = CachingAllocator::new_pool_id();
  try {
    f.allocator.hold_pool(pool);
    FAIL() << "a missing pool was held";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("does not exist"), std::string::npos) << e.what();
  }
  f.allocator.release_pool_hold(pool);  // nothing to release: no error
}

}  // namespace
}  // namespace cudakit::memory
