// GPU tier: freeing, during a capture, a block that the capturing stream used (record_stream)
// neither breaks the capture nor lets the block be reused before the work that used it
// (Note [Frees during capture]); running out of memory during a capture releases no cache and
// says why (Note [No cache release during capture]).

#include <gtest/gtest.h>

#include <optional>
#include <stdexcept>
#include <string>

#include "cudakit/core/device.hpp"
#include "cudakit/core/error.hpp"
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
  // Either may have been lent by another stream's shard; its free completes once that is seen
  // to be done (See Note [Memory across streams]).
  memory::device_allocator().process_events();
  EXPECT_EQ(static_cast<std::size_t>(memory::memory_stats().active_bytes[0].current), active_before - kBytes);
}

TEST(GraphRecordStreamGpu, OutOfMemoryInACaptureKeepsTheCacheAndNamesTheCapture) {
  CUDAKIT_REQUIRE_GPU();
  Stream caller;
  StreamGuard on(caller);
  void* cached = memory::allocate(64 << 20, caller.ref());
  memory::deallocate(cached);  // 64 MiB cached in the default pool
  synchronize();
  const auto total = static_cast<double>(mem_get_info().second);
  const auto reserved_before = memory::memory_reserved();
  const auto allocated_before = memory::memory_allocated();
  // Room for what is reserved now plus 32 MiB: a 1 GiB request cannot fit.
  memory::set_per_process_memory_fraction((static_cast<double>(reserved_before) + (32 << 20)) / total);
  graphs::Graph g;
  std::string message;
  try {
    graphs::GraphCapture capture(g);
    (void)memory::allocate(std::size_t{1} << 30);
    FAIL() << "a 1 GiB allocation fitted under the fraction limit";
  } catch (const OutOfMemoryError& e) {
    message = e.what();
  }
  memory::set_per_process_memory_fraction(1.0);
  EXPECT_NE(message.find("capturing a CUDA graph"), std::string::npos) << message;
  EXPECT_FALSE(g.is_instantiated());
  EXPECT_EQ(memory::memory_reserved(), reserved_before) << "the 64 MiB cache stayed";
  EXPECT_EQ(memory::memory_allocated(), allocated_before);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

}  // namespace
