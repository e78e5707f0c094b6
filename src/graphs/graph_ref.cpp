#include "cudakit/graphs/graph_ref.hpp"

#include "cudakit/core/error.hpp"
#include "cudakit/core/trace_hooks.hpp"

namespace cudakit::graphs {

void GraphRef::replay(OptionalStream stream_arg) const {
  if (!exec_) [[unlikely]] {
    throw StateError("GraphRef::replay", "the graph has no executable instance (not instantiated)");
  }
  const StreamRef stream = stream_or_current(stream_arg);
  CUDAKIT_TRACE({.kind = TraceEventKind::graph_launch, .device = stream.device(),
                 .stream = stream.handle(), .graph = reinterpret_cast<std::uintptr_t>(exec_)});
  CUDAKIT_CHECK_CUDA(cudaGraphLaunch(exec_, stream.handle()));
}

void GraphRef::debug_dump(const std::string& path, unsigned flags) const {
  if (!graph_) throw StateError("GraphRef::debug_dump", "there is no captured graph to dump");
  CUDAKIT_CHECK_CUDA(cudaGraphDebugDotPrint(graph_, path.c_str(), flags));
}

}  // namespace cudakit::graphs
