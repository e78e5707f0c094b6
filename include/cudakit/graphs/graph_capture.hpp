#pragma once
// @brief GraphCapture: the C++ form of `with torch.cuda.graph(g, pool=..., stream=..., ...):`.
//
//   graphs::Graph g;
//   {
//     graphs::GraphCapture capture(g, {.enable_annotations = true});
//     work(current_stream());          // recorded, not run
//   }                                  // capture ends; g is instantiated
//   g.replay();
//
// As in torch, the work is captured on a side stream: the constructor makes the capture stream
// wait for the caller's current stream, makes it current (StreamGuard) and begins the capture;
// the end restores the caller's stream and makes it wait for the capture stream.
//
// A capture that fails leaves `g` empty with its pool released: an exception leaving the scope
// abandons the capture and propagates unchanged; an illegal call inside the scope (a
// synchronization, a cudaMalloc under the global mode) makes the end throw the CudaError that
// Graph::capture_end describes.

#include <optional>

#include "cudakit/core/stream_guard.hpp"
#include "cudakit/graphs/graph.hpp"

namespace cudakit::graphs {

// How GraphCapture captures: the pool, the stream and the error mode (torch.cuda.graph's
// arguments).
struct CaptureOptions {
  // {} : a new private pool; another graph's pool() or graph_pool_handle(): share it.
  memory::PoolId pool{};
  // The stream to capture on; by default a side stream of the calling thread on the current
  // device, kept for the thread's later captures.
  std::optional<StreamRef> stream{};
  // Which other calls invalidate the capture; global by default, as torch's.
  CaptureErrorMode capture_error_mode = CaptureErrorMode::global;
  // Record mark_kernels regions for get_kernel_annotations().
  bool enable_annotations = false;
  // When given, the graph's instantiation flags (Graph::set_instantiate_options) for this
  // capture; left out, the graph keeps its own (torch's by default).
  std::optional<InstantiateOptions> instantiate{};
};

// A scope that captures the work queued on its stream into a Graph (torch.cuda.graph). Stream
// ordering: the capture stream first waits for the caller's current stream; at the end, the
// caller's stream waits for the capture stream. Neither blocks the host. Not copyable or movable;
// use it on one thread.
class GraphCapture {
 public:
  // @param graph the graph to capture into; it must be empty and outlive the scope.
  // @param options pool, stream, error mode and annotations.
  // @throws StateError as Graph::capture_begin (nothing is left captured or routed).
  // @throws CudaError as Graph::capture_begin, or when the side stream cannot be created.
  explicit GraphCapture(Graph& graph, const CaptureOptions& options = {});
  // Ends the capture unless end() did. noexcept(false): an illegal call during the capture is
  // reported from here, as torch reports it from __exit__ — unless an exception is already
  // propagating, in which case the capture is abandoned silently and that exception wins.
  // @throws CudaError as Graph::capture_end, when no other exception is propagating.
  ~GraphCapture() noexcept(false);
  // Not copyable: one scope ends the capture.
  GraphCapture(const GraphCapture&) = delete;
  // Not copyable: one scope ends the capture.
  GraphCapture& operator=(const GraphCapture&) = delete;

  // Ends the capture now (what the destructor would do): the caller's stream is current again
  // and waits for the capture stream.
  // @throws StateError when the capture has already ended.
  // @throws CudaError as Graph::capture_end.
  void end();
  // The stream being captured (current inside the scope).
  // @return the capture stream.
  [[nodiscard]] StreamRef stream() const noexcept { return guard_->current_stream(); }

 private:
  void finish(bool abandon);

  Graph& graph_;
  StreamRef caller_;
  std::optional<StreamGuard> guard_;
  int uncaught_at_start_;
  bool ended_ = false;
};

}  // namespace cudakit::graphs
