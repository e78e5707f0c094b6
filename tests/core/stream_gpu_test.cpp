#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "cudakit/core/current_stream.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/core/event.hpp"
#include "cudakit/core/stream.hpp"
#include "cudakit/core/stream_guard.hpp"
#include "cudakit/core/stream_pool.hpp"
#include "support/gpu_test.hpp"
#include "support/kernels.hpp"

namespace {

using cudakit::Stream;
using cudakit::StreamRef;

constexpr std::uint64_t kBusyNs = 50'000'000;  // 50 ms: long enough to observe "not ready"

TEST(StreamGpu, QueryReflectsPendingWorkAndSynchronizeWaits) {
  CUDAKIT_REQUIRE_GPU();
  Stream s;
  EXPECT_TRUE(s.query());
  cudakit::testing::launch_spin(s.handle(), kBusyNs);
  EXPECT_FALSE(s.query());
  s.synchronize();
  EXPECT_TRUE(s.query());
}

TEST(StreamGpu, PriorityIsCheckedAgainstTheDeviceRange) {
  CUDAKIT_REQUIRE_GPU();
  const auto [least, greatest] = cudakit::stream_priority_range();
  Stream high(-1, greatest);
  EXPECT_EQ(high.priority(), greatest);
  Stream low(-1, least);
  EXPECT_EQ(low.priority(), least);
  try {
    Stream bad(-1, greatest - 1);
    FAIL();
  } catch (const cudakit::InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("outside device"), std::string::npos) << e.what();
  }
}

TEST(StreamGpu, MoveTransfersOwnershipWithExchange) {
  CUDAKIT_REQUIRE_GPU();
  Stream a;
  const cudaStream_t h = a.handle();
  Stream b(std::move(a));
  EXPECT_EQ(b.handle(), h);
  // NOLINTNEXTLINE(bugprone-use-after-move): never the null stream, an error
  EXPECT_THROW((void)a.handle(), cudakit::StateError);
  Stream c;
  c = std::move(b);
  EXPECT_EQ(c.handle(), h);
  EXPECT_TRUE(c.query());
}

TEST(StreamGpu, ExternalStreamRefKnowsItsDeviceAndId) {
  CUDAKIT_REQUIRE_GPU();
  cudaStream_t raw = nullptr;
  ASSERT_EQ(cudaStreamCreate(&raw), cudaSuccess);
  StreamRef ref(raw);
  EXPECT_EQ(ref.device(), cudakit::current_device());
  EXPECT_EQ(ref.id(), StreamRef(raw, ref.device()).id());
  Stream other;
  EXPECT_NE(ref.id(), other.id());
  EXPECT_EQ(cudaStreamDestroy(raw), cudaSuccess);
}

TEST(StreamGpu, CurrentStreamIsPerThreadAndGuardRestores) {
  CUDAKIT_REQUIRE_GPU();
  EXPECT_TRUE(cudakit::current_stream().is_default());
  EXPECT_EQ(cudakit::current_stream(), cudakit::default_stream());
  Stream s;
  {
    cudakit::StreamGuard guard(s);
    EXPECT_EQ(cudakit::current_stream(), s.ref());
    std::thread([] { EXPECT_TRUE(cudakit::current_stream().is_default()); }).join();
    {
      Stream inner;
      cudakit::StreamGuard nested(inner);
      EXPECT_EQ(cudakit::current_stream(), inner.ref());
    }
    EXPECT_EQ(cudakit::current_stream(), s.ref());
  }
  EXPECT_TRUE(cudakit::current_stream().is_default());
}

TEST(StreamGpu, WaitStreamOrdersWorkAcrossStreams) {
  CUDAKIT_REQUIRE_GPU();
  Stream producer, consumer;
  cudakit::testing::launch_spin(producer.handle(), kBusyNs);
  consumer.wait_stream(producer);
  cudakit::testing::launch_empty(consumer.handle());
  EXPECT_FALSE(consumer.query());  // the empty kernel waits behind the spin
  consumer.synchronize();
  EXPECT_TRUE(producer.query());
}

TEST(StreamGpu, PoolHandsOutDistinctStreamsRoundRobin) {
  CUDAKIT_REQUIRE_GPU();
  std::set<cudaStream_t> seen;
  for (int i = 0; i < cudakit::kStreamsPerPool; ++i) seen.insert(cudakit::get_stream_from_pool().handle());
  EXPECT_EQ(seen.size(), static_cast<std::size_t>(cudakit::kStreamsPerPool));
  EXPECT_TRUE(seen.contains(cudakit::get_stream_from_pool().handle()));  // wrapped around
  const auto [least, greatest] = cudakit::stream_priority_range();
  EXPECT_EQ(cudakit::get_stream_from_pool(true).priority(), greatest);
  EXPECT_EQ(cudakit::get_stream_from_pool(false).priority(), least);
}

}  // namespace
