// GPU tier: freeing, during a capture, a block that the capturing stream used (record_stream)
// neither breaks the capture nor lets the block be reused before the work that used it
// (Note [Frees during capture]).

#include <gtest/gtest.h>

#include <optional>

#include "cudakit/core/device.hpp"
#include "cudakit/core/stream.hpp"
#include "cudakit/core/stream_guard.hpp"
#include "cudakit/graphs/graph_capture.hpp"
#include "cudakit/memory/device_allocator.hpp"
#include "support/gpu_test.hpp"
#include "support/kernels.hpp"

namespace {

using namespace cudakit;

TEST(GraphRecordStreamGpu, FreeOfABlockUsedByTheCaptureIsDeferredNotBreakingIt) {
  CUDAKIT_REQUIRE_GPU();
  Stream caller;
  StreamGuard on(caller);
  constexpr std::size_t kBytes = 1 << 20;
  void* shared = memory::allocate(kBytes, caller.ref());  // eager memory, used by the graph
  const std::size_t active_before = static_cast<std::size_t>(memory::memory_stats().active_bytes[0].current);
  graphs::Graph g;
  {
    graphs::GraphCapture capture(g);
    cudakit::testing::launch_fill_bytes(capture.stream().handle(), shared, kBytes, 7);
    memory::record_stream(shared, capture.stream());
    memory::deallocate(shared);  // the capturing stream used it: no event may be recorded there
  }
  ASSERT_TRUE(g.is_instantiated()) << "the free must not have broken the capture";
  EXPECT_EQ(static_cast<std::size_t>(memory::memory_stats().active_bytes[0].current), active_before)
      << "still active (pending) after the capture";
  // (No replay: the graph writes `shared`, which the program has freed — as in torch, memory a
  // graph uses must outlive its replays.)
  synchronize();
  // The capture has ended: the next allocation on the block's stream records its events, and once
  // the side stream's work is done the block comes back.
  void* next = memory::allocate(kBytes, caller.ref());
  synchronize();
  void* again = memory::allocate(kBytes, caller.ref());
  EXPECT_TRUE(next == shared || again == shared) << "the deferred free completes after the capture";
  memory::deallocate(next);
  memory::deallocate(again);
  synchronize();
  EXPECT_EQ(static_cast<std::size_t>(memory::memory_stats().active_bytes[0].current), active_before - kBytes);
}

}  // namespace
