#pragma once
// @brief GraphRef: a non-owning, trivially copyable view of a captured CUDA graph and its
// executable instance — what replay and inspection need, for graphs owned by a Graph or by other
// code.

#include <cuda_runtime_api.h>

#include <string>

#include "cudakit/core/optional_stream.hpp"

namespace cudakit::graphs {

class GraphRef {
 public:
  constexpr GraphRef() noexcept = default;
  // Either handle may be null (a graph not yet instantiated has no exec).
  constexpr GraphRef(cudaGraph_t graph, cudaGraphExec_t exec) noexcept : graph_(graph), exec_(exec) {}

  [[nodiscard]] cudaGraph_t graph() const noexcept { return graph_; }
  [[nodiscard]] cudaGraphExec_t exec() const noexcept { return exec_; }
  [[nodiscard]] bool is_instantiated() const noexcept { return exec_ != nullptr; }

  // Launches the executable graph on `stream`: its work runs after the work queued there so
  // far, and work queued later runs after it.
  // @throws StateError when there is no executable graph; CudaError from cudaGraphLaunch.
  void replay(OptionalStream stream = {}) const;
  // Writes the graph as Graphviz DOT to `path` (cudaGraphDebugDotPrint), verbose by default.
  // @throws StateError when there is no graph; CudaError when the file cannot be written.
  void debug_dump(const std::string& path, unsigned flags = cudaGraphDebugDotFlagsVerbose) const;

 private:
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

}  // namespace cudakit::graphs
