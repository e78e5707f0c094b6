// The profiler on a real GPU: fields of kernel, memcpy and memset events, record_function
// ranges around their launches, graph replays with graph and node ids, the overhead of
// profiling a 1000-kernel replay, and several hub listeners at once.

#include <gtest/gtest.h>

#include <cuda_runtime_api.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <unistd.h>

#include "cudakit/core/cupti_hub.hpp"
#include "cudakit/profiler/profiler.hpp"
#include "cudakit/profiler/record_function.hpp"
#include "support/gpu_test.hpp"
#include "support/kernels.hpp"

namespace cudakit::profiler {
namespace {

using graphs::KernelAnnotations;
using testing::launch_empty;
using testing::launch_fill_bytes;
using testing::launch_spin;

#define REQUIRE_CUPTI()                                                                \
  do {                                                                                 \
    CUDAKIT_REQUIRE_GPU();                                                             \
    if (!CuptiHub::instance().available()) FAIL() << CuptiHub::instance().reason();   \
  } while (0)

// A non-blocking stream, destroyed at scope exit.
struct TestStream {
  cudaStream_t s = nullptr;
  TestStream() { EXPECT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess); }
  ~TestStream() { cudaStreamDestroy(s); }
};

// A graph of `kernels` kernels captured on `stream` (cudaStreamBeginCapture directly).
struct TestGraph {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  template <class Body>
  TestGraph(cudaStream_t stream, Body body) {
    EXPECT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), cudaSuccess);
    body();
    EXPECT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
    EXPECT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  }
  ~TestGraph() {
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
  }
};

const RuntimeEvent* runtime_with_correlation(const TraceEvents& events, std::uint32_t c) {
  for (const auto& r : events.runtime)
    if (r.correlation == c) return &r;
  return nullptr;
}

nlohmann::json export_and_parse(const Profiler& profiler, const KernelAnnotations* annotations = nullptr) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("cudakit_profiler_gpu_" + std::to_string(::getpid()) + ".json");
  profiler.export_chrome_trace(path.string(), annotations);
  std::ifstream in(path);
  nlohmann::json trace = nlohmann::json::parse(in);
  std::filesystem::remove(path);
  return trace;
}

TEST(ProfilerGpu, KernelMemcpyMemsetEventsCarryTheirFields) {
  REQUIRE_CUPTI();
  TestStream stream;
  const std::size_t bytes = 1 << 20;
  void* device = nullptr;
  void* host = nullptr;
  ASSERT_EQ(cudaMalloc(&device, bytes), cudaSuccess);
  ASSERT_EQ(cudaMallocHost(&host, bytes), cudaSuccess);
  launch_empty(stream.s);  // lazy module loading outside the profile
  ASSERT_EQ(cudaStreamSynchronize(stream.s), cudaSuccess);
  int current_device = -1;
  ASSERT_EQ(cudaGetDevice(&current_device), cudaSuccess);

  Profiler profiler;
  ASSERT_EQ(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, stream.s), cudaSuccess);
  launch_fill_bytes(stream.s, device, bytes, 7);
  launch_spin(stream.s, 20'000);
  launch_empty(stream.s);
  ASSERT_EQ(cudaMemsetAsync(device, 0, bytes / 2, stream.s), cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, stream.s), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream.s), cudaSuccess);
  profiler.stop();
  const TraceEvents& events = profiler.events();

  ASSERT_EQ(events.kernels.size(), 3u);
  std::set<std::uint32_t> streams;
  for (const KernelEvent& k : events.kernels) {
    SCOPED_TRACE(k.name);
    EXPECT_GT(k.end_ns, k.start_ns);
    EXPECT_EQ(k.device, static_cast<std::uint32_t>(current_device));
    EXPECT_NE(k.correlation, 0u);
    const RuntimeEvent* launch = runtime_with_correlation(events, k.correlation);
    ASSERT_NE(launch, nullptr);
    EXPECT_EQ(launch->name, "cudaLaunchKernel");
    EXPECT_LT(launch->start_ns, k.start_ns);
    EXPECT_EQ(launch->thread, CuptiHub::current_thread_id());
    EXPECT_GT(k.registers_per_thread, 0u);
    EXPECT_EQ(k.graph_id, 0u);
    EXPECT_EQ(k.graph_node_id, 0u);
    streams.insert(k.stream);
  }
  EXPECT_EQ(streams.size(), 1u);
  const KernelEvent& fill = events.kernels[0];
  EXPECT_NE(fill.name.find("fill_bytes_kernel(unsigned char*, unsigned long, unsigned char)"),
            std::string::npos);
  EXPECT_EQ(fill.grid[0], 4096);
  EXPECT_EQ(fill.block[0], 256);
  EXPECT_EQ(fill.block[1], 1);
  EXPECT_NE(events.kernels[1].name.find("spin_kernel"), std::string::npos);
  EXPECT_GE(events.kernels[1].end_ns - events.kernels[1].start_ns, 19'000u);
  EXPECT_EQ(events.kernels[1].grid[0], 1);

  ASSERT_EQ(events.memory_ops.size(), 3u);
  EXPECT_EQ(events.memory_ops[0].copy_kind, "HtoD");
  EXPECT_EQ(events.memory_ops[0].name, "Memcpy HtoD (Pinned -> Device)");
  EXPECT_EQ(events.memory_ops[0].bytes, bytes);
  EXPECT_EQ(events.memory_ops[1].type, MemoryOpEvent::Type::memset);
  EXPECT_EQ(events.memory_ops[1].bytes, bytes / 2);
  EXPECT_EQ(events.memory_ops[2].copy_kind, "DtoH");
  for (const auto& op : events.memory_ops) EXPECT_EQ(op.stream, *streams.begin());
  EXPECT_TRUE(std::any_of(events.syncs.begin(), events.syncs.end(),
                          [](const SyncEvent& s) { return s.name == "Stream Sync"; }));

  // The exported trace: every kernel has the required keys, and a flow from its launch.
  const nlohmann::json trace = export_and_parse(profiler);
  std::size_t kernels = 0;
  std::set<std::uint64_t> flow_starts, flow_ends;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "s") flow_starts.insert(e["id"].get<std::uint64_t>());
    if (e["ph"] == "f") flow_ends.insert(e["id"].get<std::uint64_t>());
  }
  for (const auto& e : trace["traceEvents"]) {
    if (e.value("cat", "") != "kernel") continue;
    ++kernels;
    for (const char* key : {"device", "stream", "correlation", "registers per thread",
                            "shared memory", "grid", "block", "graph id", "graph node id"})
      EXPECT_TRUE(e["args"].contains(key)) << key;
    EXPECT_TRUE(flow_ends.contains(e["args"]["correlation"].get<std::uint64_t>()));
  }
  EXPECT_EQ(kernels, 3u);
  EXPECT_EQ(flow_starts, flow_ends);
  EXPECT_EQ(flow_starts.size(), 6u);  // 3 kernels, 2 memcpys, 1 memset
  std::cout << profiler.key_averages_table();

  cudaFreeHost(host);
  cudaFree(device);
}

TEST(ProfilerGpu, RecordFunctionRangesEncloseTheirLaunches) {
  REQUIRE_CUPTI();
  TestStream stream;
  launch_empty(stream.s);
  ASSERT_EQ(cudaStreamSynchronize(stream.s), cudaSuccess);
  Profiler profiler;
  {
    auto outer = record_function("outer");
    launch_empty(stream.s);
    {
      auto inner = record_function("inner");
      launch_spin(stream.s, 5'000);
    }
  }
  profiler.stop();
  const TraceEvents& events = profiler.events();
  ASSERT_EQ(events.ranges.size(), 2u);
  const RangeEvent& outer = events.ranges[0].name == "outer" ? events.ranges[0] : events.ranges[1];
  const RangeEvent& inner = events.ranges[0].name == "inner" ? events.ranges[0] : events.ranges[1];
  EXPECT_EQ(outer.thread, CuptiHub::current_thread_id());
  EXPECT_LE(outer.start_ns, inner.start_ns);
  EXPECT_GE(outer.end_ns, inner.end_ns);
  ASSERT_EQ(events.kernels.size(), 2u);
  for (const KernelEvent& k : events.kernels) {
    const RuntimeEvent* launch = runtime_with_correlation(events, k.correlation);
    ASSERT_NE(launch, nullptr);
    const RangeEvent& range = k.name.find("spin") != std::string::npos ? inner : outer;
    EXPECT_LE(range.start_ns, launch->start_ns) << k.name;
    EXPECT_GE(range.end_ns, launch->end_ns) << k.name;
    EXPECT_EQ(range.thread, launch->thread);
  }
  // A range ended after stop() is not recorded.
  { auto late = record_function("late"); }
  EXPECT_EQ(profiler.events().ranges.size(), 2u);
}

TEST(ProfilerGpu, GraphReplayKernelsHaveGraphAndDistinctNodeIds) {
  REQUIRE_CUPTI();
  TestStream stream;
  void* device = nullptr;
  ASSERT_EQ(cudaMalloc(&device, 4096), cudaSuccess);
  TestGraph graph(stream.s, [&] {
    for (int i = 0; i < 4; ++i) launch_empty(stream.s);
    launch_fill_bytes(stream.s, device, 4096, 1);
    cudaMemsetAsync(device, 0, 4096, stream.s);
  });
  ASSERT_EQ(cudaGraphLaunch(graph.exec, stream.s), cudaSuccess);  // warm-up upload
  ASSERT_EQ(cudaStreamSynchronize(stream.s), cudaSuccess);

  Profiler profiler;
  ASSERT_EQ(cudaGraphLaunch(graph.exec, stream.s), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream.s), cudaSuccess);
  profiler.stop();
  const TraceEvents& events = profiler.events();
  ASSERT_EQ(events.kernels.size(), 5u);
  std::set<std::uint64_t> nodes;
  for (const KernelEvent& k : events.kernels) {
    EXPECT_NE(k.graph_id, 0u);
    EXPECT_NE(k.graph_node_id, 0u);
    nodes.insert(k.graph_node_id);
    const RuntimeEvent* launch = runtime_with_correlation(events, k.correlation);
    ASSERT_NE(launch, nullptr);
    EXPECT_EQ(launch->name, "cudaGraphLaunch");
  }
  EXPECT_EQ(nodes.size(), 5u);
  ASSERT_EQ(events.memory_ops.size(), 1u);
  EXPECT_NE(events.memory_ops[0].graph_node_id, 0u);

  // For the graph layer: do replay node ids equal CUPTI's ids of the captured graph's nodes?
  std::size_t count = 0;
  ASSERT_EQ(cudaGraphGetNodes(graph.graph, nullptr, &count), cudaSuccess);
  std::vector<cudaGraphNode_t> graph_nodes(count);
  ASSERT_EQ(cudaGraphGetNodes(graph.graph, graph_nodes.data(), &count), cudaSuccess);
  std::set<std::uint64_t> captured;
  for (cudaGraphNode_t node : graph_nodes) {
    std::uint64_t id = 0;
    if (CuptiHub::instance().get_graph_node_id(node, &id) == CUPTI_SUCCESS) captured.insert(id);
  }
  std::uint32_t captured_graph_id = 0;
  std::uint32_t exec_id = 0;
  CuptiHub::instance().get_graph_id(graph.graph, &captured_graph_id);
  ASSERT_EQ(CuptiHub::instance().get_graph_exec_id(graph.exec, &exec_id), CUPTI_SUCCESS);
  std::cout << "replayed graph id " << events.kernels[0].graph_id << ", captured graph id "
            << captured_graph_id << ", exec id " << exec_id << "; replayed node ids "
            << (std::includes(captured.begin(), captured.end(), nodes.begin(), nodes.end())
                    ? "are"
                    : "are NOT")
            << " the captured graph's CUPTI node ids (first replayed " << *nodes.begin()
            << ", first captured " << (captured.empty() ? 0 : *captured.begin()) << ")\n";
  // Observed on the first H200 run: replay ids are the executable graph's. Is a replayed node
  // id (exec id << 32) | (low 32 bits of the captured node's id)? The graph layer relies on it.
  EXPECT_EQ(events.kernels[0].graph_id, exec_id);
  std::set<std::uint64_t> replayed_all = nodes;
  replayed_all.insert(events.memory_ops[0].graph_node_id);
  std::set<std::uint64_t> mapped;
  for (std::uint64_t id : captured) mapped.insert((std::uint64_t{exec_id} << 32) | (id & 0xffffffffu));
  EXPECT_EQ(replayed_all, mapped);

  // Annotations keyed by those node ids reach the exported kernels.
  KernelAnnotations annotations;
  for (std::uint64_t node : nodes) annotations[node] = {{{"name", std::string("region")}}};
  const nlohmann::json trace = export_and_parse(profiler, &annotations);
  std::size_t annotated = 0;
  for (const auto& e : trace["traceEvents"])
    if (e.value("cat", "") == "kernel" && e["args"].value("name", "") == "region") ++annotated;
  EXPECT_EQ(annotated, 5u);
  cudaFree(device);
}

TEST(CuptiHubGpu, TwoListenersBothReceiveRecords) {
  REQUIRE_CUPTI();
  CuptiHub& hub = CuptiHub::instance();
  TestStream stream;
  std::atomic<int> first{0}, second{0}, callbacks_domain{0}, callbacks_id{0};
  const int a = hub.add_activity_listener({CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL},
                                          [&](const CUpti_Activity&) { ++first; });
  const int b = hub.add_activity_listener(
      {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMSET},
      [&](const CUpti_Activity& r) {
        if (r.kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) ++second;
      });
  const int c = hub.add_callback(CUPTI_CB_DOMAIN_RUNTIME_API,
                                 [&](CUpti_CallbackDomain, CUpti_CallbackId id, const void* data) {
                                   const auto* info = static_cast<const CUpti_CallbackData*>(data);
                                   if (id == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000 &&
                                       info->callbackSite == CUPTI_API_ENTER)
                                     ++callbacks_domain;
                                 });
  const int d = hub.add_callback_id(CUPTI_CB_DOMAIN_RUNTIME_API,
                                    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
                                    [&](CUpti_CallbackDomain, CUpti_CallbackId, const void* data) {
                                      if (static_cast<const CUpti_CallbackData*>(data)->callbackSite ==
                                          CUPTI_API_ENTER)
                                        ++callbacks_id;
                                    });
  // A profiler alongside them gets the same kernels.
  Profiler profiler;
  for (int i = 0; i < 10; ++i) launch_empty(stream.s);
  ASSERT_EQ(cudaStreamSynchronize(stream.s), cudaSuccess);
  profiler.stop();  // flushes for everyone
  EXPECT_EQ(first, 10);
  EXPECT_EQ(second, 10);
  EXPECT_EQ(profiler.events().kernels.size(), 10u);
  EXPECT_EQ(callbacks_domain, 10);
  EXPECT_EQ(callbacks_id, 10);

  // After removing one of each, the other keeps receiving; the removed never hears again.
  hub.remove_activity_listener(a);
  hub.remove_callback(c);
  for (int i = 0; i < 5; ++i) launch_empty(stream.s);
  ASSERT_EQ(cudaStreamSynchronize(stream.s), cudaSuccess);
  hub.flush();
  EXPECT_EQ(first, 10);
  EXPECT_EQ(second, 15);
  EXPECT_EQ(callbacks_domain, 10);
  EXPECT_EQ(callbacks_id, 15);  // the id stays enabled after its domain's listener left
  hub.remove_activity_listener(b);
  hub.remove_callback(d);
}

}  // namespace
}  // namespace cudakit::profiler
