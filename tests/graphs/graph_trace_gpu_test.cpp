// GPU tier: graph capture and launch as the trace hooks report them.

#include <gtest/gtest.h>

#include <mutex>
#include <vector>

#include "cudakit/core/stream.hpp"
#include "cudakit/core/trace_hooks.hpp"
#include "cudakit/graphs/graph_capture.hpp"
#include "cudakit/tensor/elementwise.hpp"
#include "cudakit/tensor/factories.hpp"
#include "support/gpu_test.hpp"

namespace {

using cudakit::TraceEvent;
using cudakit::TraceEventKind;
namespace ten = cudakit::tensor;

TEST(GraphTraceGpu, CaptureAndReplayAreReportedInOrder) {
  CUDAKIT_REQUIRE_GPU();
  const ten::TensorOptions on_gpu{ten::DType::float32, ten::Device{ten::Device::Type::cuda, 0}};
  ten::Tensor x = ten::zeros({1024}, on_gpu);
  cudakit::synchronize();
  std::mutex mutex;
  std::vector<TraceEvent> seen;
  const auto id = cudakit::attach_trace_listener([&](const TraceEvent& e) {
    std::lock_guard lock(mutex);
    seen.push_back(e);
  });
  cudakit::graphs::Graph graph;
  cudaStream_t capture_stream = nullptr;
  {
    cudakit::graphs::GraphCapture capture(graph);
    capture_stream = capture.stream().handle();
    ten::Tensor y = ten::add(x, 1.0);
    (void)y;
  }
  cudakit::Stream replay_stream;
  graph.replay(replay_stream);
  replay_stream.synchronize();
  cudakit::detach_trace_listener(id);

  std::vector<TraceEventKind> kinds;
  for (const auto& e : seen) {
    if (e.kind == TraceEventKind::capture_begin || e.kind == TraceEventKind::capture_end ||
        e.kind == TraceEventKind::graph_launch || e.kind == TraceEventKind::kernel_launch) {
      kinds.push_back(e.kind);
    }
  }
  ASSERT_GE(kinds.size(), 4u);
  EXPECT_EQ(kinds.front(), TraceEventKind::capture_begin);
  EXPECT_EQ(kinds.back(), TraceEventKind::graph_launch);
  EXPECT_EQ(kinds[kinds.size() - 2], TraceEventKind::capture_end);
  std::uintptr_t capture_id = 0;
  for (const auto& e : seen) {
    if (e.kind == TraceEventKind::capture_begin) capture_id = e.graph;
  }
  EXPECT_NE(capture_id, 0u);
  for (const auto& e : seen) {
    if (e.kind == TraceEventKind::capture_begin || e.kind == TraceEventKind::capture_end) {
      EXPECT_EQ(e.graph, capture_id);
      EXPECT_EQ(e.stream, capture_stream);
    }
    if (e.kind == TraceEventKind::graph_launch) {
      EXPECT_EQ(e.stream, replay_stream.handle());
      // The capture's id: a listener matches the replay with what the capture recorded.
      EXPECT_EQ(e.graph, capture_id);
    }
    if (e.kind == TraceEventKind::kernel_launch) EXPECT_EQ(e.stream, capture_stream);
  }
}

}  // namespace
