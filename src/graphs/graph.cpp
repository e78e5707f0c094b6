#include "cudakit/graphs/graph.hpp"

#include "cudakit/core/capture_hook.hpp"

#include <algorithm>
#include <optional>
#include <thread>
#include <utility>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/core/trace_hooks.hpp"
#include "cudakit/graphs/capture_status.hpp"
#include "cudakit/memory/mem_pool.hpp"
#include "graphs/detail/annotation_capture.hpp"
#include "graphs/detail/capture_failures.hpp"
#include "graphs/detail/graph_pool.hpp"

namespace cudakit::graphs {

struct Graph::Impl {
  explicit Impl(bool keep) : keep_graph(keep) {}

  bool keep_graph;
  InstantiateOptions instantiate_options;  // lasts across clear(), as keep_graph
  int device = -1;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  std::shared_ptr<detail::GraphPoolLease> pool;

  // While capturing.
  cudaStream_t capture_stream = nullptr;
  std::thread::id capture_thread;
  memory::PoolId routed_before;  // the capturing thread's pool before capture_begin
  std::optional<detail::CaptureFailureWatch> watch;
  // From capture_begin with annotations until instantiation.
  std::unique_ptr<detail::AnnotationCapture> annotations;
  // Capture hooks (random generators' offsets) whose state each replay must advance.
  std::vector<std::pair<CaptureHook*, std::uint64_t>> replay_hooks;
  // States registered with this graph (register_capture_state), beside the process's hooks.
  std::vector<CaptureHook*> registered;

  // Every hook a capture of this graph calls: the process's, then this graph's.
  [[nodiscard]] std::vector<CaptureHook*> hooks() const {
    std::vector<CaptureHook*> all = capture_hooks();
    all.insert(all.end(), registered.begin(), registered.end());
    return all;
  }

  [[nodiscard]] bool capturing() const noexcept { return capture_stream != nullptr; }

  // Ends what capture_begin started besides the CUDA capture itself.
  // The capture failed or was abandoned: the hooks' capture_begin is undone.
  void abort_hooks() noexcept {
    for (CaptureHook* hook : hooks()) hook->capture_abort(device);
  }

  void stop_capturing() noexcept {
    if (std::this_thread::get_id() == capture_thread) {
      memory::exchange_current_pool(device, routed_before);
    }
    capture_stream = nullptr;
    watch.reset();
  }

  // Back to empty (keep_graph and instantiate_options survive).
  void clear() noexcept {
    annotations.reset();
    replay_hooks.clear();
    if (exec) CUDAKIT_WARN_CUDA(cudaGraphExecDestroy(std::exchange(exec, nullptr)));
    if (graph) CUDAKIT_WARN_CUDA(cudaGraphDestroy(std::exchange(graph, nullptr)));
    // After the graph: the graph's memory must outlive any use by it. See Note [Graph pools].
    pool.reset();
    device = -1;
  }
};

namespace {

[[noreturn]] void throw_capture_failed(cudaError_t end_status,
                                       const std::optional<detail::FailedCall>& culprit) {
  const char* cleanup = "; the partial graph was destroyed and its memory pool released";
  if (!culprit) {
    throw CudaError(end_status, "cudaStreamEndCapture",
                    cudakit::detail::concat("the capture failed", cleanup));
  }
  const std::string api = culprit->api.empty() ? "cudaStreamEndCapture" : culprit->api;
  const std::string who = culprit->api.empty() ? std::string("a call during the capture")
                                               : culprit->api;
  throw CudaError(culprit->status, api,
                  cudakit::detail::concat(who, " is not allowed while a stream is capturing and broke the capture (",
                                 cudaGetErrorName(culprit->status), ": ",
                                 cudaGetErrorString(culprit->status), "); cudaStreamEndCapture returned ",
                                 cudaGetErrorName(end_status), cleanup));
}

}  // namespace

Graph::Graph(bool keep_graph) : impl_(std::make_unique<Impl>(keep_graph)) {}

Graph::~Graph() { reset(); }

// A live Graph always holds its Impl; only a moved-from one has none (See Note [Moved-from
// owners] in src/core/stream.cpp).
Graph::Impl& Graph::usable(const char* api) const {
  if (!impl_) [[unlikely]] cudakit::detail::throw_moved_from("Graph", api);
  return *impl_;
}

Graph::Graph(Graph&& other) noexcept : impl_(std::exchange(other.impl_, nullptr)) {}

Graph& Graph::operator=(Graph&& other) noexcept {
  if (this != &other) {
    reset();
    impl_ = std::exchange(other.impl_, nullptr);
  }
  return *this;
}

void Graph::capture_begin(memory::PoolId pool, CaptureErrorMode mode, bool enable_annotations) {
  Impl& s = usable("capture_begin");
  if (s.capturing()) throw StateError("Graph::capture_begin", "a capture is already in progress");
  if (s.graph) {
    throw StateError("Graph::capture_begin", "the graph already holds a capture; reset() it first");
  }
  const StreamRef stream = current_stream();
  if (stream.is_default()) {
    throw StateError("Graph::capture_begin",
                     "the current stream is the legacy default stream, which cannot capture; capture "
                     "on a side stream (GraphCapture does)");
  }
  if (is_stream_capturing(stream)) {
    throw StateError("Graph::capture_begin", "the current stream is already capturing another graph");
  }
  // Before the capture begins: a hook may queue work (a generator's first device slot write).
  s.device = stream.device();
  {
    const auto hooks = s.hooks();
    std::size_t begun = 0;
    try {
      for (; begun < hooks.size(); ++begun) hooks[begun]->capture_begin(s.device);
    } catch (...) {
      for (std::size_t i = 0; i < begun; ++i) hooks[i]->capture_abort(s.device);
      s.device = -1;
      throw;
    }
  }
  std::shared_ptr<detail::GraphPoolLease> lease;
  try {
    lease = detail::GraphPoolLease::acquire(stream.device(), pool);
  } catch (...) {
    s.abort_hooks();
    s.device = -1;
    throw;
  }
  s.watch.emplace();
  const memory::PoolId before = memory::exchange_current_pool(stream.device(), lease->id());
  if (const cudaError_t status = cudaStreamBeginCapture(stream.handle(), to_cuda(mode));
      status != cudaSuccess) {
    memory::exchange_current_pool(stream.device(), before);
    s.watch.reset();
    s.abort_hooks();
    s.device = -1;
    CUDAKIT_CHECK_CUDA(status);
  }
  s.device = stream.device();
  s.pool = std::move(lease);
  s.capture_stream = stream.handle();
  s.capture_thread = std::this_thread::get_id();
  s.routed_before = before;
  if (enable_annotations) s.annotations = std::make_unique<detail::AnnotationCapture>(stream.handle());
  CUDAKIT_TRACE({.kind = TraceEventKind::capture_begin, .device = s.device,
                 .stream = s.capture_stream, .graph = reinterpret_cast<std::uintptr_t>(impl_.get())});
}

void Graph::capture_end() {
  if (!usable("capture_end").capturing()) {
    throw StateError("Graph::capture_end", "no capture in progress: call capture_begin first");
  }
  Impl& s = *impl_;
  if (s.annotations) s.annotations->finish();
  // Hooks append their last nodes (e.g. the generator's slot advance) while still capturing.
  std::vector<std::pair<CaptureHook*, std::uint64_t>> replay_hooks;
  for (CaptureHook* hook : s.hooks()) {
    if (const std::uint64_t token = hook->capture_end(s.device, StreamRef(s.capture_stream, s.device))) {
      replay_hooks.emplace_back(hook, token);
    }
  }
  cudaGraph_t graph = nullptr;
  const cudaError_t status = cudaStreamEndCapture(s.capture_stream, &graph);
  if (status != cudaSuccess || !graph) {
    const auto culprit = s.watch->culprit();
    if (graph) CUDAKIT_WARN_CUDA(cudaGraphDestroy(graph));
    (void)cudaGetLastError();  // the failure is reported below, not left for the next call
    s.abort_hooks();
    s.stop_capturing();
    s.clear();
    throw_capture_failed(status == cudaSuccess ? cudaErrorStreamCaptureInvalidated : status, culprit);
  }
  const cudaStream_t capture_stream = s.capture_stream;  // stop_capturing forgets it
  s.stop_capturing();
  s.graph = graph;
  s.replay_hooks = std::move(replay_hooks);
  CUDAKIT_TRACE({.kind = TraceEventKind::capture_end, .device = s.device,
                 .stream = capture_stream, .graph = reinterpret_cast<std::uintptr_t>(impl_.get())});
  if (!s.keep_graph) instantiate();
}

void Graph::capture_abort() noexcept {
  if (!impl_ || !impl_->capturing()) return;
  Impl& s = *impl_;
  s.annotations.reset();
  cudaGraph_t graph = nullptr;
  (void)cudaStreamEndCapture(s.capture_stream, &graph);
  if (graph) CUDAKIT_WARN_CUDA(cudaGraphDestroy(graph));
  (void)cudaGetLastError();
  s.abort_hooks();
  s.stop_capturing();
  s.clear();
}

void Graph::register_capture_state(CaptureHook& state) {
  Impl& s = usable("register_generator_state");
  if (std::find(s.registered.begin(), s.registered.end(), &state) != s.registered.end()) return;
  if (s.graph && !s.capturing()) {
    throw StateError("Graph::register_generator_state",
                     "the capture has ended: register before capture_begin (or during the capture, "
                     "before the generator's first draw in it), or reset() and capture again");
  }
  if (s.capturing()) state.capture_begin(s.device);  // its draws from now on are the graph's
  s.registered.push_back(&state);
}

// Note [Instantiation flags]
// torch 2.11's CUDAGraph::instantiate passes cudaGraphInstantiateFlagAutoFreeOnLaunch |
// cudaGraphInstantiateFlagUseNodePriority; cudakit passed none until 2026-12-05, when its replay
// of an 8-kernel graph took more host time than torch's (notes/performance-rows.md).
// Both flags are behaviour, not only speed: the first lets a graph that allocated through
// stream-ordered allocation nodes be replayed again without freeing first, the second keeps each
// kernel at its captured priority whatever stream a replay is launched on. Matching torch makes a
// graph behave as a torch user expects, and InstantiateOptions lets a program choose otherwise
// (graph_bench times both in one process).
void Graph::set_instantiate_options(const InstantiateOptions& options) {
  Impl& s = usable("set_instantiate_options");
  if (s.exec) {
    throw StateError("Graph::set_instantiate_options",
                     "the graph is already instantiated: reset() it and capture again");
  }
  s.instantiate_options = options;
}

InstantiateOptions Graph::instantiate_options() const { return usable("instantiate_options").instantiate_options; }

void Graph::instantiate() {
  if (!usable("instantiate").graph) {
    throw StateError("Graph::instantiate",
                     impl_ && impl_->capturing() ? "the graph is still capturing: call capture_end first"
                                                 : "nothing was captured (or the graph was reset)");
  }
  Impl& s = *impl_;
  if (s.exec) return;
  if (s.annotations) {
    s.exec = s.annotations->instantiate(s.graph, s.instantiate_options.cuda_flags());
    s.annotations.reset();
  } else {
    CUDAKIT_CHECK_CUDA(cudaGraphInstantiateWithFlags(&s.exec, s.graph, s.instantiate_options.cuda_flags()));
  }
}

void Graph::replay(OptionalStream stream_arg) {
  Impl* s = &usable("replay");
  if (!s->exec) [[unlikely]] {
    if (!s->graph) {
      throw StateError("Graph::replay",
                       s && s->capturing() ? "the graph is still capturing: call capture_end first"
                                           : "the graph is empty: it was never captured, or was reset");
    }
    instantiate();
  }
  const StreamRef stream = stream_or_current(stream_arg, s->device);
  for (const auto& [hook, token] : s->replay_hooks) hook->replay(s->device, token, stream);
  // The capture's id (not the executable's handle), so that a listener matches a replay with
  // what its capture recorded (the sanitizer replays a graph's accesses).
  CUDAKIT_TRACE({.kind = TraceEventKind::graph_launch, .device = s->device,
                 .stream = stream.handle(), .graph = reinterpret_cast<std::uintptr_t>(s)});
  CUDAKIT_CHECK_CUDA(cudaGraphLaunch(s->exec, stream.handle()));
}

void Graph::reset() noexcept {
  if (!impl_) return;
  capture_abort();
  impl_->clear();
}

memory::PoolId Graph::pool() const {
  const Impl& s = usable("pool");
  return s.pool ? s.pool->id() : memory::PoolId{};
}
bool Graph::is_capturing() const { return usable("is_capturing").capturing(); }
bool Graph::is_instantiated() const { return usable("is_instantiated").exec != nullptr; }
int Graph::device() const { return usable("device").device; }
GraphRef Graph::ref() const {
  const Impl& s = usable("ref");
  return GraphRef(s.graph, s.exec);
}

void Graph::debug_dump(const std::string& path, unsigned flags) const {
  if (!usable("debug_dump").graph) {
    throw StateError("Graph::debug_dump", "there is no captured graph to dump (capture_end first)");
  }
  ref().debug_dump(path, flags);
}

memory::PoolId graph_pool_handle() noexcept { return memory::CachingAllocator::new_pool_id(); }

}  // namespace cudakit::graphs
