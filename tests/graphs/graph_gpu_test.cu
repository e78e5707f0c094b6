// GPU tier: capture and replay, private pools, capture failures, kernel annotations against
// CUPTI's activity records, and replay timings (printed).

#include <optional>
#include <cupti.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <set>
#include <stdexcept>
#include <vector>

#include "cudakit/core/cupti_hub.hpp"
#include "cudakit/core/driver_api.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/core/event.hpp"
#include "cudakit/core/stream.hpp"
#include "cudakit/core/stream_guard.hpp"
#include "cudakit/graphs/capture_status.hpp"
#include "cudakit/graphs/graph_capture.hpp"
#include "cudakit/graphs/kernel_annotation_registry.hpp"
#include "cudakit/graphs/kernel_annotation_scope.hpp"
#include "cudakit/memory/device_allocator.hpp"
#include "cudakit/memory/mem_pool.hpp"
#include "support/gpu_test.hpp"
#include "support/kernels.hpp"

namespace {

using namespace cudakit;
using graphs::CaptureOptions;
using graphs::Graph;
using graphs::GraphCapture;

__global__ void add_then_double(int* x, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = (x[i] + 1) * 2;
}
__global__ void copy_ints(const int* from, int* to, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) to[i] = from[i];
}
__global__ void plus_one(int* x, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1;
}

constexpr int kN = 4096;
constexpr int kBlock = 256;
constexpr int kGrid = kN / kBlock;

std::vector<int> read(const int* device, int n, StreamRef stream) {
  std::vector<int> host(static_cast<std::size_t>(n));
  CUDAKIT_CHECK_CUDA(cudaMemcpyAsync(host.data(), device, sizeof(int) * n, cudaMemcpyDeviceToHost, stream.handle()));
  stream.synchronize();
  return host;
}

void write(int* device, int value, int n, StreamRef stream) {
  std::vector<int> host(static_cast<std::size_t>(n), value);
  CUDAKIT_CHECK_CUDA(cudaMemcpyAsync(device, host.data(), sizeof(int) * n, cudaMemcpyHostToDevice, stream.handle()));
  stream.synchronize();
}

// nvcc does not emit PoolId's defaulted comparison in device-compiled files: compare by hand.
bool same_pool(memory::PoolId a, memory::PoolId b) { return a.first == b.first && a.second == b.second; }

struct MemoryState {
  std::size_t reserved, allocated;
  static MemoryState now() {
    CUDAKIT_CHECK_CUDA(cudaDeviceSynchronize());
    return {memory::memory_reserved(), memory::memory_allocated()};
  }
};

class GraphGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!is_available()) GTEST_SKIP() << "no CUDA device";
    stream_storage_.emplace();
  }
  // The "caller's" stream of each test, made in SetUp: constructing a Stream needs a device, and
  // the fixture is built even where the test then skips.
  std::optional<Stream> stream_storage_;
  Stream& stream() { return *stream_storage_; }
};

TEST_F(GraphGpu, CaptureThenReplayThreeTimes) {
  StreamGuard on(stream());
  int* x = static_cast<int*>(memory::allocate(sizeof(int) * kN));
  write(x, 1, kN, stream());
  Graph g;
  {
    GraphCapture capture(g);
    EXPECT_TRUE(graphs::is_current_stream_capturing());
    EXPECT_NE(capture.stream(), stream().ref());  // a side stream, as torch
    add_then_double<<<kGrid, kBlock, 0, capture.stream().handle()>>>(x, kN);
    plus_one<<<kGrid, kBlock, 0, capture.stream().handle()>>>(x, kN);
  }
  EXPECT_FALSE(graphs::is_current_stream_capturing());
  EXPECT_EQ(current_stream(), stream().ref());
  EXPECT_TRUE(g.is_instantiated());
  EXPECT_EQ(read(x, kN, stream())[7], 1) << "capture must not run the work";
  int expected = 1;
  for (int replay = 0; replay < 3; ++replay) {
    g.replay();
    expected = (expected + 1) * 2 + 1;
    const auto values = read(x, kN, stream());
    EXPECT_TRUE(std::all_of(values.begin(), values.end(), [&](int v) { return v == expected; }))
        << "replay " << replay << ": " << values[0] << " != " << expected;
  }
  g.debug_dump("/tmp/cudakit_graph_test.dot");
  g.reset();
  EXPECT_THROW(g.replay(), StateError);
  memory::deallocate(x);
}

TEST_F(GraphGpu, EveryInstantiationFlagReplaysTheWork) {
  StreamGuard on(stream());
  int* x = static_cast<int*>(memory::allocate(sizeof(int) * kN));
  for (const bool auto_free : {false, true}) {
    for (const bool node_priority : {false, true}) {
      const graphs::InstantiateOptions options{.auto_free_on_launch = auto_free, .use_node_priority = node_priority};
      write(x, 1, kN, stream());
      Graph g;
      {
        GraphCapture capture(g, {.instantiate = options});
        plus_one<<<kGrid, kBlock, 0, capture.stream().handle()>>>(x, kN);
      }
      EXPECT_EQ(g.instantiate_options(), options);
      EXPECT_THROW(g.set_instantiate_options({}), StateError) << "flags are fixed once instantiated";
      g.replay();
      g.replay();
      EXPECT_EQ(read(x, kN, stream())[kN - 1], 3) << "auto_free " << auto_free << ", node priority " << node_priority;
    }
  }
  memory::deallocate(x);
}

// A graph whose capture allocated through cudaMallocAsync and never freed: with
// auto_free_on_launch (torch's choice, the default) each replay frees the last one's allocation
// first; without it a second replay is refused until the allocation is freed.
TEST_F(GraphGpu, AutoFreeOnLaunchLetsAGraphThatKeepsItsAllocationReplay) {
  StreamGuard on(stream());
  for (const bool auto_free : {true, false}) {
    Graph g;
    int* p = nullptr;
    {
      GraphCapture capture(g, {.instantiate = graphs::InstantiateOptions{.auto_free_on_launch = auto_free}});
      CUDAKIT_CHECK_CUDA(cudaMallocAsync(reinterpret_cast<void**>(&p), sizeof(int) * kN, capture.stream().handle()));
      plus_one<<<kGrid, kBlock, 0, capture.stream().handle()>>>(p, kN);
    }
    g.replay();
    if (auto_free) {
      g.replay();
    } else {
      EXPECT_THROW(g.replay(), CudaError);
    }
    CUDAKIT_CHECK_CUDA(cudaFreeAsync(p, stream().handle()));  // the last replay's allocation
    g.replay();  // freed: a replay may allocate again, with or without the flag
    CUDAKIT_CHECK_CUDA(cudaFreeAsync(p, stream().handle()));
    stream().synchronize();
  }
}

TEST_F(GraphGpu, AllocationsDuringCaptureLiveInThePoolAcrossReplays) {
  StreamGuard on(stream());
  int* in = static_cast<int*>(memory::allocate(sizeof(int) * kN));
  int* out = static_cast<int*>(memory::allocate(sizeof(int) * kN));
  const MemoryState before = MemoryState::now();
  Graph g;
  int* scratch = nullptr;
  {
    GraphCapture capture(g);  // global mode: the pool's segment comes from a relaxed cudaMalloc
    scratch = static_cast<int*>(memory::allocate(sizeof(int) * kN));
    copy_ints<<<kGrid, kBlock, 0, capture.stream().handle()>>>(in, scratch, kN);
    plus_one<<<kGrid, kBlock, 0, capture.stream().handle()>>>(scratch, kN);
    copy_ints<<<kGrid, kBlock, 0, capture.stream().handle()>>>(scratch, out, kN);
  }
  auto& allocator = memory::device_allocator();
  EXPECT_TRUE(allocator.has_pool(g.pool()));
  EXPECT_GE(allocator.pool_allocated_bytes(g.pool()), sizeof(int) * kN);
  EXPECT_TRUE(allocator.owns(scratch));
  for (int value : {10, 20, 30}) {
    write(in, value, kN, stream());
    g.replay();
    EXPECT_EQ(read(out, kN, stream())[kN - 1], value + 1);
  }
  const memory::PoolId pool = g.pool();
  memory::deallocate(scratch);
  g.reset();
  EXPECT_FALSE(allocator.has_pool(pool)) << "reset releases the private pool";
  const MemoryState after = MemoryState::now();
  EXPECT_EQ(after.reserved, before.reserved);
  EXPECT_EQ(after.allocated, before.allocated);
  memory::deallocate(in);
  memory::deallocate(out);
}

TEST_F(GraphGpu, TwoGraphsShareAPool) {
  StreamGuard on(stream());
  const MemoryState before = MemoryState::now();
  auto& allocator = memory::device_allocator();
  const memory::PoolId handle = graphs::graph_pool_handle();
  Graph g1, g2;
  int* a = nullptr;
  int* b = nullptr;
  {
    GraphCapture capture(g1, {.pool = handle});
    a = static_cast<int*>(memory::allocate(sizeof(int) * kN));
    CUDAKIT_CHECK_CUDA(cudaMemsetAsync(a, 0, sizeof(int) * kN, capture.stream().handle()));
    plus_one<<<kGrid, kBlock, 0, capture.stream().handle()>>>(a, kN);
  }
  {
    GraphCapture capture(g2, {.pool = g1.pool()});
    b = static_cast<int*>(memory::allocate(sizeof(int) * kN));
    copy_ints<<<kGrid, kBlock, 0, capture.stream().handle()>>>(a, b, kN);
    plus_one<<<kGrid, kBlock, 0, capture.stream().handle()>>>(b, kN);
  }
  EXPECT_TRUE(same_pool(g1.pool(), handle));
  EXPECT_TRUE(same_pool(g2.pool(), handle));
  for (int i = 0; i < 3; ++i) {
    g1.replay();
    g2.replay();
    EXPECT_EQ(read(b, kN, stream())[3], 2);
  }
  memory::deallocate(a);
  memory::deallocate(b);
  g1.reset();
  EXPECT_TRUE(allocator.has_pool(handle)) << "g2 still uses the pool";
  g2.replay();
  g2.reset();
  EXPECT_FALSE(allocator.has_pool(handle)) << "the last graph released the pool";
  const MemoryState after = MemoryState::now();
  EXPECT_EQ(after.reserved, before.reserved);
  EXPECT_EQ(after.allocated, before.allocated);
}

// ---- capture failures ----

class GraphCaptureFailureGpu : public GraphGpu {
 protected:
  // Every failure leaves: no capture, an empty graph, no pool, the caller's stream current,
  // and memory as it was.
  void expect_clean(const Graph& g, memory::PoolId pool, const MemoryState& before) {
    EXPECT_FALSE(g.is_capturing());
    EXPECT_FALSE(g.is_instantiated());
    EXPECT_TRUE(g.pool().is_default());
    EXPECT_FALSE(memory::device_allocator().has_pool(pool)) << "the pool leaked";
    EXPECT_EQ(current_stream(), stream().ref());
    EXPECT_FALSE(graphs::is_current_stream_capturing());
    EXPECT_TRUE(memory::current_pool(stream().device()).is_default());
    const MemoryState after = MemoryState::now();
    EXPECT_EQ(after.reserved, before.reserved);
    EXPECT_EQ(after.allocated, before.allocated);
    EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  }
  static bool cupti() { return CuptiHub::instance().available(); }
};

TEST_F(GraphCaptureFailureGpu, SynchronizingCallNamesTheCall) {
  StreamGuard on(stream());
  const MemoryState before = MemoryState::now();
  Graph g;
  memory::PoolId pool;
  bool threw = false;
  try {
    GraphCapture capture(g);
    pool = g.pool();
    void* p = memory::allocate(1 << 20);
    cudakit::testing::launch_fill_bytes(capture.stream().handle(), p, 1 << 20, 7);
    EXPECT_EQ(cudaStreamSynchronize(capture.stream().handle()), cudaErrorStreamCaptureUnsupported);
    memory::deallocate(p);
  } catch (const CudaError& e) {
    threw = true;
    std::printf("[ capture failure ] %s\n", e.what());
    const std::string message = e.what();
    EXPECT_NE(message.find("cudaErrorStreamCaptureUnsupported"), std::string::npos) << message;
    EXPECT_NE(message.find("cudaErrorStreamCaptureInvalidated"), std::string::npos) << message;
    if (cupti()) EXPECT_EQ(e.api(), "cudaStreamSynchronize") << message;
  }
  EXPECT_TRUE(threw) << "a capture broken by cudaStreamSynchronize must not end quietly";
  expect_clean(g, pool, before);
}

TEST_F(GraphCaptureFailureGpu, IllegalCudaMallocUnderGlobalMode) {
  StreamGuard on(stream());
  const MemoryState before = MemoryState::now();
  Graph g;
  memory::PoolId pool;
  void* raw = nullptr;
  cudaError_t malloc_status = cudaSuccess;
  bool threw = false;
  try {
    GraphCapture capture(g);
    pool = g.pool();
    cudakit::testing::launch_empty(capture.stream().handle());
    malloc_status = cudaMalloc(&raw, 1 << 20);
    cudakit::testing::launch_empty(capture.stream().handle());
  } catch (const CudaError& e) {
    threw = true;
    std::printf("[ capture failure ] %s\n", e.what());
    if (cupti()) EXPECT_EQ(e.api(), "cudaMalloc") << e.what();
    EXPECT_NE(std::string(e.what()).find(cudaGetErrorName(malloc_status)), std::string::npos) << e.what();
  }
  std::printf("[ capture failure ] cudaMalloc during a global capture returned %s; the capture %s\n",
              cudaGetErrorName(malloc_status), threw ? "was invalidated" : "survived");
  EXPECT_EQ(malloc_status, cudaErrorStreamCaptureUnsupported);
  EXPECT_TRUE(threw);
  if (raw) CUDAKIT_CHECK_CUDA(cudaFree(raw));
  if (!threw) g.reset();
  expect_clean(g, pool, before);
}

TEST_F(GraphCaptureFailureGpu, ExceptionInScopePropagatesAfterCleanup) {
  StreamGuard on(stream());
  const MemoryState before = MemoryState::now();
  Graph g;
  memory::PoolId pool;
  try {
    GraphCapture capture(g);
    pool = g.pool();
    void* p = memory::allocate(3 << 20);
    cudakit::testing::launch_fill_bytes(capture.stream().handle(), p, 3 << 20, 1);
    memory::deallocate(p);
    throw std::runtime_error("user code failed mid-capture");
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "user code failed mid-capture");
  }
  expect_clean(g, pool, before);
  // The graph can capture again.
  {
    GraphCapture capture(g);
    cudakit::testing::launch_empty(capture.stream().handle());
  }
  g.replay();
  stream().synchronize();
}

// ---- annotations ----

struct Replayed {
  std::string kind;  // kernel, memset, memcpy
  std::uint64_t start;
  std::uint64_t node;
};

// Every kernel, memset and memcpy record of what runs between start() and stop().
class ActivityRecorder {
 public:
  void start() {
    auto& hub = CuptiHub::instance();
    listener_ = hub.add_activity_listener(
        {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_MEMCPY},
        [this](const CUpti_Activity& r) {
          std::lock_guard lock(mutex_);
          if (r.kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
            const auto& k = reinterpret_cast<const CUpti_ActivityKernel10&>(r);
            records_.push_back({"kernel", k.start, k.graphNodeId});
          } else if (r.kind == CUPTI_ACTIVITY_KIND_MEMSET) {
            const auto& m = reinterpret_cast<const CUpti_ActivityMemset4&>(r);
            records_.push_back({"memset", m.start, m.graphNodeId});
          } else if (r.kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
            const auto& m = reinterpret_cast<const CUpti_ActivityMemcpy6&>(r);
            records_.push_back({"memcpy", m.start, m.graphNodeId});
          }
        });
  }
  std::vector<Replayed> stop() {
    CUDAKIT_CHECK_CUDA(cudaDeviceSynchronize());
    auto& hub = CuptiHub::instance();
    hub.flush();
    hub.remove_activity_listener(listener_);
    std::lock_guard lock(mutex_);
    std::vector<Replayed> out = records_;
    std::sort(out.begin(), out.end(), [](const Replayed& a, const Replayed& b) { return a.start < b.start; });
    return out;
  }

 private:
  int listener_ = -1;
  std::mutex mutex_;
  std::vector<Replayed> records_;
};

class AnnotationGpu : public GraphGpu {
 protected:
  void SetUp() override {
    GraphGpu::SetUp();
    if (IsSkipped()) return;
    if (!CuptiHub::instance().available()) {
      GTEST_SKIP() << "CUPTI unavailable: " << CuptiHub::instance().reason();
    }
  }
  void TearDown() override {
    if (CuptiHub::instance().available()) graphs::set_annotation_mechanism(std::nullopt);
  }
};

using graphs::Annotation;
using graphs::mark_kernels;

std::string merged_name(const graphs::KernelAnnotations& all, std::uint64_t node) {
  const Annotation merged = graphs::merged_annotation(all, node);
  auto it = merged.find("name");
  return it == merged.end() ? "-" : std::get<std::string>(it->second);
}

// The workload: 7 chained kernels (tags by launch order), a memset and a memcpy, in nested
// regions. Returns, by launch order, the merged "name" each kernel must carry; the memset must
// carry "softmax" and the memcpy "attention".
std::vector<std::string> capture_workload(Graph& g, int* x, int* y) {
  GraphCapture capture(g, {.enable_annotations = true});
  const cudaStream_t s = capture.stream().handle();
  plus_one<<<kGrid, kBlock, 0, s>>>(x, kN);  // 0: outside every region
  {
    mark_kernels attention("attention");
    plus_one<<<kGrid, kBlock, 0, s>>>(x, kN);  // 1
    plus_one<<<kGrid, kBlock, 0, s>>>(x, kN);  // 2
    {
      mark_kernels inner({{"name", "softmax"}, {"layer", 3}});
      plus_one<<<kGrid, kBlock, 0, s>>>(x, kN);  // 3
      CUDAKIT_CHECK_CUDA(cudaMemsetAsync(y, 0, sizeof(int) * kN, s));  // memset: softmax
    }
    CUDAKIT_CHECK_CUDA(cudaMemcpyAsync(y, x, sizeof(int) * kN, cudaMemcpyDeviceToDevice, s));  // attention
    plus_one<<<kGrid, kBlock, 0, s>>>(x, kN);  // 4
  }
  {
    mark_kernels mlp({{"name", "mlp"}, {"layer", 3}});
    plus_one<<<kGrid, kBlock, 0, s>>>(x, kN);  // 5
  }
  plus_one<<<kGrid, kBlock, 0, s>>>(x, kN);  // 6
  return {"-", "attention", "attention", "softmax", "attention", "mlp", "-"};  // the kernels
}

// Diagnostics for notes/graphs.md: the node events CUPTI announces while capturing and
// instantiating (ids are read afterwards: callbacks must not call into the hub).
class NodeEventLog {
 public:
  NodeEventLog() {
    listener_ = CuptiHub::instance().add_callback(
        CUPTI_CB_DOMAIN_RESOURCE, [this](CUpti_CallbackDomain, CUpti_CallbackId id, const void* data) {
          if (id != CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED && id != CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED) return;
          const auto* g = static_cast<const CUpti_GraphData*>(
              static_cast<const CUpti_ResourceData*>(data)->resourceDescriptor);
          std::lock_guard lock(mutex_);
          events_.push_back({id == CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED, g->node, g->originalNode,
                             static_cast<int>(g->nodeType)});
        });
  }
  ~NodeEventLog() { CuptiHub::instance().remove_callback(listener_); }
  void print() {
    auto& hub = CuptiHub::instance();
    std::lock_guard lock(mutex_);
    for (const auto& e : events_) {
      std::uint64_t id = 0, original = 0;
      (void)hub.get_graph_node_id(e.node, &id);
      if (e.original) (void)hub.get_graph_node_id(e.original, &original);
      std::printf("[ node events ] %-7s type %d id %llu original %llu\n", e.cloned ? "CLONED" : "CREATED",
                  e.type, static_cast<unsigned long long>(id), static_cast<unsigned long long>(original));
    }
  }

 private:
  struct Entry {
    bool cloned;
    CUgraphNode node, original;
    int type;
  };
  int listener_ = -1;
  std::mutex mutex_;
  std::vector<Entry> events_;
};

void check_annotations_match_activity(graphs::AnnotationMechanism mechanism) {
  graphs::set_annotation_mechanism(mechanism);
  graphs::clear_kernel_annotations();
  int* x = static_cast<int*>(memory::allocate(sizeof(int) * kN));
  int* y = static_cast<int*>(memory::allocate(sizeof(int) * kN));
  Graph g;
  NodeEventLog node_events;
  const auto expected = capture_workload(g, x, y);
  const auto recorded = graphs::get_kernel_annotations();
  for (const auto& [node, list] : recorded) {
    std::printf("[ annotations/%s ] recorded node %llu -> %s\n", graphs::to_string(mechanism),
                static_cast<unsigned long long>(node), merged_name(recorded, node).c_str());
  }
  // 5 kernels, a memset and a memcpy are in regions: every mechanism annotates all three kinds.
  EXPECT_EQ(recorded.size(), 7u);

  // Node ids of the captured (not instantiated) graph, for "which id does CUPTI report".
  std::set<std::uint64_t> captured_ids;
  {
    std::size_t n = 0;
    CUDAKIT_CHECK_CUDA(cudaGraphGetNodes(g.ref().graph(), nullptr, &n));
    std::vector<cudaGraphNode_t> nodes(n);
    CUDAKIT_CHECK_CUDA(cudaGraphGetNodes(g.ref().graph(), nodes.data(), &n));
    for (auto node : nodes) {
      std::uint64_t id = 0;
      if (CuptiHub::instance().get_graph_node_id(node, &id) == CUPTI_SUCCESS) captured_ids.insert(id);
    }
  }

  ActivityRecorder recorder;
  recorder.start();
  g.replay();
  const auto replayed = recorder.stop();
  int from_captured = 0;
  std::size_t kernel = 0;
  int memsets = 0, memcpys = 0;
  for (const auto& r : replayed) {
    std::string want;
    if (r.kind == "kernel") want = kernel < expected.size() ? expected[kernel++] : "?";
    else if (r.kind == "memset") want = (++memsets, "softmax");
    else if (r.kind == "memcpy") want = (++memcpys, "attention");
    EXPECT_NE(r.node, 0u) << r.kind << " has no graph node id";
    from_captured += captured_ids.count(r.node) ? 1 : 0;
    EXPECT_EQ(merged_name(recorded, r.node), want) << r.kind << " node " << r.node;
    std::printf("[ annotations/%s ] %-6s node %-8llu -> %s (recorded: %s)\n",
                graphs::to_string(mechanism), r.kind.c_str(),
                static_cast<unsigned long long>(r.node), want.c_str(), merged_name(recorded, r.node).c_str());
  }
  EXPECT_EQ(kernel, expected.size());
  if (::testing::Test::HasFailure()) node_events.print();
  EXPECT_EQ(memsets, 1) << "the memset node's record";
  EXPECT_EQ(memcpys, 1) << "the memcpy node's record";
  std::printf("[ annotations/%s ] replayed records carrying a captured node's CUPTI id: %d of %zu "
              "(the rest carry the executable clone's id)\n",
              graphs::to_string(mechanism), from_captured, replayed.size());
  if (mechanism == graphs::AnnotationMechanism::cupti) EXPECT_EQ(from_captured, 0);
  // The nested region's node keeps both objects, outermost first.
  for (const auto& [node, list] : recorded) {
    if (merged_name(recorded, node) == "softmax") {
      ASSERT_EQ(list.size(), 2u);
      EXPECT_EQ(std::get<std::string>(list[0].at("name")), "attention");
      EXPECT_EQ(std::get<std::int64_t>(list[1].at("layer")), 3);
    }
  }
  graphs::save_kernel_annotations("/tmp/cudakit_annotations_test.json");
  EXPECT_EQ(graphs::load_kernel_annotations("/tmp/cudakit_annotations_test.json"), recorded);
  g.reset();
  memory::deallocate(x);
  memory::deallocate(y);
}

TEST_F(AnnotationGpu, CuptiIdsMatchReplayedActivity) {
  StreamGuard on(stream());
  check_annotations_match_activity(graphs::AnnotationMechanism::cupti);
}

TEST_F(AnnotationGpu, ToolsIdsMatchReplayedActivity) {
  if (!detail::driver().cuGraphNodeGetToolsId) {
    GTEST_SKIP() << "the driver has no cuGraphNodeGetToolsId (CUDA < 13.1); the CUPTI path covers it";
  }
  StreamGuard on(stream());
  check_annotations_match_activity(graphs::AnnotationMechanism::tools_id);
}

TEST_F(AnnotationGpu, NothingRecordedWithoutEnable) {
  StreamGuard on(stream());
  graphs::clear_kernel_annotations();
  Graph g;
  {
    GraphCapture capture(g);
    mark_kernels region("ignored");
    cudakit::testing::launch_empty(capture.stream().handle());
  }
  g.replay();
  EXPECT_TRUE(graphs::get_kernel_annotations().empty());
  std::printf("[ annotations ] mechanism in use by default: %s\n",
              graphs::to_string(graphs::annotation_mechanism()));
}

// ---- timings ----

}  // namespace
