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

struct CaptureOptions {
  // {} : a new private pool; another graph's pool() or graph_pool_handle(): share it.
  memory::PoolId pool{};
  // The stream to capture on; by default a side stream of the calling thread on the current
  // device, kept for the thread's later captures.
  std::optional<StreamRef> stream{};
  CaptureErrorMode capture_error_mode = CaptureErrorMode::global;
  // Record mark_kernels regions for get_kernel_annotations().
  bool enable_annotations = false;
};

class GraphCapture {
 public:
  // @throws what Graph::capture_begin throws (nothing is left captured or routed).
  explicit GraphCapture(Graph& graph, const CaptureOptions& options = {});
  // Ends the capture unless end() did. noexcept(false): an illegal call during the capture is
  // reported from here, as torch reports it from __exit__ — unless an exception is already
  // propagating, in which case the capture is abandoned silently and that exception wins.
  ~GraphCapture() noexcept(false);
  GraphCapture(const GraphCapture&) = delete;
  GraphCapture& operator=(const GraphCapture&) = delete;

  // Ends the capture now (what the destructor would do). @throws as Graph::capture_end.
  void end();
  // The stream being captured (current inside the scope).
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
