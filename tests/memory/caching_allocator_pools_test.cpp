// Host tier: memory pools of the caching allocator: separate from the default pool, with their own
// providers, a provider that calls back into its own pool, a provider that throws.

#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include "cudakit/core/error.hpp"
#include "cudakit/memory/caching_allocator.hpp"
#include "cudakit/memory/host_segment_provider.hpp"
#include "memory/host_allocator_fixture.hpp"

namespace cudakit::memory {
namespace {

using testing::Fixture;
using testing::kStreamA;
using testing::MiB;

TEST(CachingAllocatorPools, PoolsAreSeparateAndReleaseTheirMemory) {
  Fixture f;
  const PoolId pool = CachingAllocator::new_pool_id();
  f.allocator.create_pool(pool);
  EXPECT_THROW(f.allocator.create_pool(pool), InvalidArgumentError);
  void* in_pool = f.allocator.allocate(5 * MiB, kStreamA, pool);
  void* outside = f.allocator.allocate(5 * MiB, kStreamA);
  EXPECT_EQ(f.allocator.pool_allocated_bytes(pool), 5 * MiB);
  EXPECT_GE(f.allocator.pool_reserved_bytes(pool), 5 * MiB);
  f.allocator.deallocate(in_pool);
  void* again = f.allocator.allocate(5 * MiB, kStreamA, pool);
  EXPECT_EQ(again, in_pool);  // reuse within the pool
  f.allocator.release_pool(pool);
  EXPECT_FALSE(f.allocator.has_pool(pool));
  EXPECT_THROW((void)f.allocator.allocate(10, kStreamA, pool), InvalidArgumentError);
  f.allocator.deallocate(again);  // blocks outliving their pool can still be freed
  f.allocator.empty_cache();
  EXPECT_EQ(f.allocator.pool_reserved_bytes(pool), 0u);
  f.allocator.deallocate(outside);
  EXPECT_THROW(f.allocator.release_pool(PoolId{}), InvalidArgumentError);
}

TEST(CachingAllocatorPools, PoolWithItsOwnProvider) {
  Fixture f;
  auto own = std::make_shared<HostSegmentProvider>(64 * MiB, 0);  // page 0: segments only
  const PoolId pool = CachingAllocator::new_pool_id();
  f.allocator.create_pool(pool, own);
  void* p = f.allocator.allocate(3 * MiB, kStreamA, pool);
  EXPECT_GT(own->in_use(), 0u);
  EXPECT_EQ(f.provider->in_use(), 0u);
  f.allocator.deallocate(p);
  f.allocator.release_pool(pool);
  EXPECT_EQ(own->in_use(), 0u);
}

// See Note [A pool's allocator calling back]: a pool whose allocation function allocates through
// the same allocator, from that same pool (a CUDAPluggableAllocator over cudakit's own functions
// under use_mem_pool), gets its memory from the default pool instead of waiting for ever on the
// pool's own lock.
TEST(CachingAllocatorPools, APoolsAllocatorAskingThatPoolIsServedByTheDefaultPool) {
  struct CallingBack : HostSegmentProvider {
    CallingBack() : HostSegmentProvider(8ull << 30, 0) {}  // page size 0: fixed segments, as user functions
    CachingAllocator* allocator = nullptr;
    PoolId pool;
    std::vector<void*> inner;
    void* allocate_segment(std::size_t bytes, StreamKey stream) override {
      inner.push_back(allocator->allocate(4096, stream, pool));
      return HostSegmentProvider::allocate_segment(bytes, stream);
    }
  };
  Fixture f;
  auto provider = std::make_shared<CallingBack>();
  provider->allocator = &f.allocator;
  provider->pool = CachingAllocator::new_pool_id();
  f.allocator.create_pool(provider->pool, provider, {});
  void* p = f.allocator.allocate(3 * MiB, kStreamA, provider->pool);
  ASSERT_EQ(provider->inner.size(), 1u);
  EXPECT_GT(f.allocator.pool_allocated_bytes(PoolId{}), 0u) << "the inner request went to the default pool";
  EXPECT_GE(f.allocator.pool_allocated_bytes(provider->pool), 3 * MiB);
  f.allocator.deallocate(p);
  for (void* q : provider->inner) f.allocator.deallocate(q);
  f.allocator.release_pool(provider->pool);
}

// A provider that throws (a user's allocation function raising, a default pool's function that
// calls back into the default pool) fails that request alone: the shard is not left locked, and
// the next request on the same stream is served.
TEST(CachingAllocatorPools, AProviderThatThrowsLeavesTheShardUsable) {
  struct Throwing : HostSegmentProvider {
    Throwing() : HostSegmentProvider(8ull << 30, 0) {}
    int throws_left = 1;
    void* allocate_segment(std::size_t bytes, StreamKey stream) override {
      if (throws_left > 0) {
        --throws_left;
        throw std::runtime_error("the user's allocation function failed");
      }
      return HostSegmentProvider::allocate_segment(bytes, stream);
    }
  };
  Fixture f;
  auto provider = std::make_shared<Throwing>();
  const PoolId pool = CachingAllocator::new_pool_id();
  f.allocator.create_pool(pool, provider, {});
  EXPECT_THROW((void)f.allocator.allocate(3 * MiB, kStreamA, pool), std::runtime_error);
  void* p = nullptr;
  std::thread other([&] { p = f.allocator.allocate(3 * MiB, kStreamA, pool); });  // would wait for ever
  other.join();
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(f.allocator.pool_allocated_bytes(pool), 3 * MiB);
  f.allocator.deallocate(p);
  f.allocator.release_pool(pool);
}

}  // namespace
}  // namespace cudakit::memory
