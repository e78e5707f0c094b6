#pragma once
// @brief GraphRef: a non-owning, trivially copyable view of a captured CUDA graph and its
// executable instance — what replay and inspection need, for graphs owned by a Graph or by other
// code.

#include <cuda_runtime_api.h>

#include <string>

#include "cudakit/core/optional_stream.hpp"

namespace cudakit::graphs {

// A non-owning view of a captured graph and its executable instance; cheap to copy. The owner (a
// Graph, or other code) must keep both alive while the view is used.
class GraphRef {
 public:
  // An empty view: no graph, no executable.
  constexpr GraphRef() noexcept = default;
  // Either handle may be null (a graph not yet instantiated has no exec).
  // @param graph the captured graph, or null.
  // @param exec its executable instance, or null.
  constexpr GraphRef(cudaGraph_t graph, cudaGraphExec_t exec) noexcept : graph_(graph), exec_(exec) {}

  // @return the captured graph; null when there is none.
  [[nodiscard]] cudaGraph_t graph() const noexcept { return graph_; }
  // @return the executable instance; null when not instantiated.
  [[nodiscard]] cudaGraphExec_t exec() const noexcept { return exec_; }
  // @return true when there is an executable instance.
  [[nodiscard]] bool is_instantiated() const noexcept { return exec_ != nullptr; }

  // Launches the executable graph on `stream`: its work runs after the work queued there so
  // far, and work queued later runs after it.
  // The host does not wait. Unlike Graph::replay, no capture hooks run: state captured with
  // the graph (random offsets) is not advanced.
  // @param stream the stream to launch on; the current stream of the current device when
  //        omitted.
  // @throws StateError when there is no executable graph.
  // @throws CudaError from cudaGraphLaunch.
  void replay(OptionalStream stream = {}) const;
  // Writes the graph as Graphviz DOT to `path` (cudaGraphDebugDotPrint), verbose by default.
  // @param path the file to write.
  // @param flags cudaGraphDebugDotFlags bits.
  // @throws StateError when there is no graph.
  // @throws CudaError when the file cannot be written.
  void debug_dump(const std::string& path, unsigned flags = cudaGraphDebugDotFlagsVerbose) const;

 private:
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

}  // namespace cudakit::graphs
