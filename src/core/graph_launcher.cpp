#include "cudakit/core/detail/graph_launcher.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "cudakit/core/detail/relaxed_capture_mode.hpp"
#include "cudakit/core/driver_api.hpp"

namespace cudakit::detail {

// Note [Launching through a one-node graph]
// On the H200 machines with driver 580, cuLaunchKernel costs microseconds of host time per
// launch, an empty kernel included, with the runtime's <<<>>> alike, on the legacy default
// stream or a stream of its own, however many launches come between synchronizations; a
// cudaMemsetAsync costs a fraction of that. Launching an instantiated one-node graph, with its
// node's parameters changed first (cuGraphExecKernelNodeSetParams), costs about half of a
// cuLaunchKernel (notes/figures.md, "Launching through a one-node graph"). So the jiterator's
// cached call, whose budget is hardly more than one plain launch, can meet it only this way.
//
// How: each thread keeps, per (stream, context), one graph of one kernel node, instantiated on
// first use. A launch sets the node's function, dimensions and parameters (any of them may change
// in an instantiated graph, the function within its context) unless they equal the previous
// launch's, then launches the graph on the stream. The update affects only later launches, so
// one still running is safe. Per stream, because launches of one executable graph are ordered
// behind each other: sharing one between streams would order work the streams do not order.
// Per thread, because an executable graph must not be updated by two threads at once; so no lock.
// A stream captured into a graph declines (the capture must record the kernel itself), as does a
// stream whose graph calls failed once (another context's stream behind a reused handle, say):
// the caller launches with cuLaunchKernel, so the fallback is the plain launch, never an error.
// A stream's first launch in a thread is a plain one (declined) and only its second makes the graph:
// a program that launches once (the jiterator's first call in a process, say) pays no
// instantiation. At most kMaxGraphs streams per thread: the least recently used graph is destroyed first (an
// executable graph still running is freed when it completes). CUDAKIT_LAUNCH_GRAPHS=0 turns it all
// off, for tools that would rather see plain launches.

namespace {

constexpr std::size_t kMaxGraphs = 8;
constexpr std::size_t kMaxValues = 64;

struct StreamGraph {
  CUstream stream = nullptr;
  CUcontext context = nullptr;
  CUgraph graph = nullptr;
  CUgraphNode node = nullptr;
  CUgraphExec exec = nullptr;
  bool failed = false;  // declines from now on
  bool seen = false;    // launched once, plainly: the next launch makes the graph
  // The node's present function, dimensions and parameter values (value_count 0: not known).
  CUfunction function = nullptr;
  std::array<unsigned, 7> dims{};  // grid, block, shared bytes
  std::array<std::uint64_t, kMaxValues> values{};
  std::size_t value_count = 0;
  std::uint64_t last_use = 0;
};

struct ThreadGraphs {
  std::vector<StreamGraph> graphs;
  std::size_t last_hit = 0;
  std::uint64_t clock = 0;
  GraphLaunchCounters counters;

  ThreadGraphs() = default;
  ThreadGraphs(const ThreadGraphs&) = delete;
  ThreadGraphs& operator=(const ThreadGraphs&) = delete;
  ~ThreadGraphs() {
    for (StreamGraph& g : graphs) release(g);
  }

  static void release(StreamGraph& g) noexcept {
    // At thread or process exit the driver may be gone: failures are ignored.
    const DriverApi& d = driver();
    if (g.exec && d.cuGraphExecDestroy) (void)d.cuGraphExecDestroy(g.exec);
    if (g.graph && d.cuGraphDestroy) (void)d.cuGraphDestroy(g.graph);
    g.exec = nullptr;
    g.graph = nullptr;
  }
};

// Behind a pointer: this library's static TLS must stay small (it is dlopened by Python).
thread_local std::unique_ptr<ThreadGraphs> t_graphs;

std::atomic<int> g_enabled{-1};  // -1: not read from the environment yet

CUDA_KERNEL_NODE_PARAMS node_params(const GraphKernelLaunch& l) {
  CUDA_KERNEL_NODE_PARAMS p{};
  p.func = l.function;
  p.gridDimX = l.grid[0];
  p.gridDimY = l.grid[1];
  p.gridDimZ = l.grid[2];
  p.blockDimX = l.block[0];
  p.blockDimY = l.block[1];
  p.blockDimZ = l.block[2];
  p.sharedMemBytes = l.shared_bytes;
  p.kernelParams = l.parameters;
  return p;
}

std::array<unsigned, 7> dims_of(const GraphKernelLaunch& l) {
  return {l.grid[0], l.grid[1], l.grid[2], l.block[0], l.block[1], l.block[2], l.shared_bytes};
}

bool driver_has_graphs(const DriverApi& d) {
  return d.loaded && d.cuGraphCreate && d.cuGraphAddKernelNode && d.cuGraphInstantiateWithFlags &&
         d.cuGraphExecKernelNodeSetParams && d.cuGraphLaunch && d.cuGraphExecDestroy && d.cuGraphDestroy &&
         d.cuStreamIsCapturing && d.cuCtxGetCurrent;
}

// Makes g's graph with `l` as its node; false (g failed) if any call fails.
bool instantiate(StreamGraph& g, const GraphKernelLaunch& l, const DriverApi& d) {
  // Another thread's global-mode capture forbids instantiation here; it queues no work.
  const RelaxedCaptureMode relaxed;
  const CUDA_KERNEL_NODE_PARAMS p = node_params(l);
  if (d.cuGraphCreate(&g.graph, 0) != CUDA_SUCCESS || d.cuGraphAddKernelNode(&g.node, g.graph, nullptr, 0, &p) != CUDA_SUCCESS ||
      d.cuGraphInstantiateWithFlags(&g.exec, g.graph, 0) != CUDA_SUCCESS) {
    ThreadGraphs::release(g);
    g.failed = true;
    return false;
  }
  return true;
}

StreamGraph& find_or_add(ThreadGraphs& t, CUstream stream, CUcontext context) {
  if (t.last_hit < t.graphs.size()) {
    StreamGraph& g = t.graphs[t.last_hit];
    if (g.stream == stream && g.context == context) return g;
  }
  for (std::size_t i = 0; i < t.graphs.size(); ++i) {
    if (t.graphs[i].stream == stream && t.graphs[i].context == context) {
      t.last_hit = i;
      return t.graphs[i];
    }
  }
  if (t.graphs.size() == kMaxGraphs) {
    const auto oldest = std::min_element(t.graphs.begin(), t.graphs.end(),
                                         [](const StreamGraph& a, const StreamGraph& b) { return a.last_use < b.last_use; });
    ThreadGraphs::release(*oldest);
    t.graphs.erase(oldest);
  }
  t.graphs.push_back({.stream = stream, .context = context});
  t.last_hit = t.graphs.size() - 1;
  return t.graphs.back();
}

}  // namespace

bool graph_launches_enabled() noexcept {
  int enabled = g_enabled.load(std::memory_order_relaxed);
  if (enabled < 0) {
    const char* value = std::getenv("CUDAKIT_LAUNCH_GRAPHS");
    enabled = value != nullptr && std::strcmp(value, "0") == 0 ? 0 : 1;
    g_enabled.store(enabled, std::memory_order_relaxed);
  }
  return enabled == 1;
}

void set_graph_launches(bool enabled) noexcept { g_enabled.store(enabled ? 1 : 0, std::memory_order_relaxed); }

GraphLaunchCounters graph_launch_counters() noexcept { return t_graphs ? t_graphs->counters : GraphLaunchCounters{}; }

bool launch_through_graph(const GraphKernelLaunch& l) {
  if (!graph_launches_enabled()) return false;
  const DriverApi& d = driver();
  if (!driver_has_graphs(d)) return false;
  if (!t_graphs) t_graphs = std::make_unique<ThreadGraphs>();
  ThreadGraphs& t = *t_graphs;
  CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
  CUcontext context = nullptr;
  if (d.cuStreamIsCapturing(l.stream, &capture) != CUDA_SUCCESS || capture != CU_STREAM_CAPTURE_STATUS_NONE ||
      d.cuCtxGetCurrent(&context) != CUDA_SUCCESS || context == nullptr) {
    ++t.counters.declined;
    return false;
  }
  StreamGraph& g = find_or_add(t, l.stream, context);
  g.last_use = ++t.clock;
  if (g.failed) {
    ++t.counters.declined;
    return false;
  }
  const std::array<unsigned, 7> dims = dims_of(l);
  const bool fits = !l.values.empty() && l.values.size() <= kMaxValues;
  if (g.exec == nullptr) {
    if (!g.seen) {
      g.seen = true;
      ++t.counters.declined;
      return false;
    }
    if (!instantiate(g, l, d)) {
      ++t.counters.declined;
      return false;
    }
    ++t.counters.instantiations;
  } else {
    const bool same = fits && g.value_count == l.values.size() && g.function == l.function && g.dims == dims &&
                      std::equal(l.values.begin(), l.values.end(), g.values.begin());
    if (!same) {
      const CUDA_KERNEL_NODE_PARAMS p = node_params(l);
      if (d.cuGraphExecKernelNodeSetParams(g.exec, g.node, &p) != CUDA_SUCCESS) {
        g.failed = true;
        ++t.counters.declined;
        return false;
      }
      ++t.counters.updates;
    }
  }
  g.function = l.function;
  g.dims = dims;
  g.value_count = fits ? l.values.size() : 0;
  if (fits) std::copy(l.values.begin(), l.values.end(), g.values.begin());
  if (d.cuGraphLaunch(g.exec, l.stream) != CUDA_SUCCESS) {
    // Nothing was queued; the caller's own launch reports what is wrong, if anything still is.
    g.failed = true;
    ++t.counters.declined;
    return false;
  }
  ++t.counters.launches;
  return true;
}

}  // namespace cudakit::detail
