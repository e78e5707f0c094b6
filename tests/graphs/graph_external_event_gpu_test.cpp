// GPU tier: external events (torch's Event(external=True)) become event record and wait nodes
// of a captured graph, so that each replay is ordered against work outside the graph.

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "cudakit/core/error.hpp"
#include "cudakit/core/event.hpp"
#include "cudakit/core/current_stream.hpp"
#include "cudakit/core/stream.hpp"
#include "cudakit/core/stream_guard.hpp"
#include "cudakit/graphs/graph.hpp"
#include "cudakit/graphs/graph_capture.hpp"
#include "cudakit/memory/device_allocator.hpp"
#include "support/gpu_test.hpp"
#include "support/kernels.hpp"

namespace cudakit {
namespace {

int count_nodes(cudaGraph_t graph, cudaGraphNodeType type) {
  std::size_t n = 0;
  EXPECT_EQ(cudaGraphGetNodes(graph, nullptr, &n), cudaSuccess);
  std::vector<cudaGraphNode_t> nodes(n);
  EXPECT_EQ(cudaGraphGetNodes(graph, nodes.data(), &n), cudaSuccess);
  int count = 0;
  for (cudaGraphNode_t node : nodes) {
    cudaGraphNodeType t{};
    EXPECT_EQ(cudaGraphNodeGetType(node, &t), cudaSuccess);
    count += t == type;
  }
  return count;
}

TEST(GraphExternalEventGpu, RecordAndWaitBecomeEventNodesThatOrderEachReplay) {
  CUDAKIT_REQUIRE_GPU();
  constexpr std::size_t kBytes = 1 << 20;
  auto* produced = static_cast<std::uint8_t*>(memory::allocate(kBytes));
  auto* copied = static_cast<std::uint8_t*>(memory::allocate(kBytes));
  auto* mismatches = static_cast<unsigned long long*>(memory::allocate(sizeof(unsigned long long)));
  Stream producer, consumer;
  Event ready(EventFlags{.external = true});
  Event done(EventFlags{.external = true});
  ready.record(producer);  // created before the capture
  graphs::Graph g(/*keep_graph=*/true);
  {
    StreamGuard on(consumer);
    graphs::GraphCapture capture(g);
    ready.wait();  // a wait node: each replay waits for ready's latest record
    ASSERT_EQ(cudaMemcpyAsync(copied, produced, kBytes, cudaMemcpyDeviceToDevice, current_stream().handle()),
              cudaSuccess);
    done.record();  // a record node: work outside can wait for each replay
  }
  EXPECT_EQ(count_nodes(g.ref().graph(), cudaGraphNodeTypeWaitEvent), 1);
  EXPECT_EQ(count_nodes(g.ref().graph(), cudaGraphNodeTypeEventRecord), 1);
  for (std::uint8_t value : {3, 7, 11}) {
    // The producer is slow: without the wait node the copy would read the previous value.
    cudakit::testing::launch_spin(producer.handle(), 20'000'000);
    cudakit::testing::launch_fill_bytes(producer.handle(), produced, kBytes, value);
    ready.record(producer);
    g.replay(consumer);
    done.wait(producer);  // the producer may overwrite only after the replay copied
    ASSERT_EQ(cudaMemsetAsync(mismatches, 0, sizeof *mismatches, producer.handle()), cudaSuccess);
    cudakit::testing::launch_count_mismatches(producer.handle(), copied, kBytes, value, mismatches);
    unsigned long long bad = 1;
    ASSERT_EQ(cudaMemcpyAsync(&bad, mismatches, sizeof bad, cudaMemcpyDeviceToHost, producer.handle()), cudaSuccess);
    producer.synchronize();
    EXPECT_EQ(bad, 0u) << "the replay copied before the producer's fill of " << int(value);
  }
  consumer.synchronize();
  memory::deallocate(produced);
  memory::deallocate(copied);
  memory::deallocate(mismatches);
}

// A plain event recorded outside the capture never becomes a wait node: CUDA either refuses the
// wait (the capture is invalidated; the error names the call) or orders nothing by it. The
// external flag is what makes it a node; outside a capture an external event is a plain one.
TEST(GraphExternalEventGpu, OnlyAnExternalEventBecomesAWaitNode) {
  CUDAKIT_REQUIRE_GPU();
  Stream producer, consumer;
  Event plain;
  plain.record(producer);
  graphs::Graph g(/*keep_graph=*/true);
  bool refused = false;
  try {
    StreamGuard on(consumer);
    graphs::GraphCapture capture(g);
    plain.wait();
  } catch (const CudaError& e) {
    refused = true;
    EXPECT_NE(std::string(e.what()).find("cudaStreamWaitEvent"), std::string::npos) << e.what();
  }
  if (!refused) {
    EXPECT_EQ(count_nodes(g.ref().graph(), cudaGraphNodeTypeWaitEvent), 0);
    g.reset();
  }
  Event external(EventFlags{.external = true});
  EXPECT_TRUE(external.flags().external);
  external.record(producer);  // not capturing: a plain record
  external.wait(consumer);    // likewise
  {
    StreamGuard on(consumer);
    graphs::GraphCapture capture(g);
    external.wait();
  }
  EXPECT_EQ(count_nodes(g.ref().graph(), cudaGraphNodeTypeWaitEvent), 1);
  g.replay(consumer);
  consumer.synchronize();
}

}  // namespace
}  // namespace cudakit
