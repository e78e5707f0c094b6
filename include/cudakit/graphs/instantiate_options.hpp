#pragma once
// @brief InstantiateOptions: how a captured graph becomes executable (cudaGraphInstantiateWithFlags'
// flags), torch's choice by default.

#include <cuda_runtime_api.h>

namespace cudakit::graphs {

// The flags a Graph is instantiated with. The defaults are torch's CUDAGraph::instantiate (torch
// 2.11): both flags on. See Note [Instantiation flags] in src/graphs/graph.cpp.
struct InstantiateOptions {
  // cudaGraphInstantiateFlagAutoFreeOnLaunch: memory a replay allocated through stream-ordered
  // allocation nodes (a capture under the cudaMallocAsync backend) and did not free is freed before
  // the next replay, instead of that replay failing.
  bool auto_free_on_launch = true;
  // cudaGraphInstantiateFlagUseNodePriority: each kernel runs at the priority it was captured with
  // (the capture stream's, or its launch attribute's), not at the priority of the stream a replay
  // is launched on.
  bool use_node_priority = true;

  // @return the cudaGraphInstantiateFlags bits these options stand for.
  [[nodiscard]] constexpr unsigned long long cuda_flags() const noexcept {
    unsigned long long flags = 0;
    if (auto_free_on_launch) flags |= cudaGraphInstantiateFlagAutoFreeOnLaunch;
    if (use_node_priority) flags |= cudaGraphInstantiateFlagUseNodePriority;
    return flags;
  }
  // Equal when both flags are.
  friend constexpr bool operator==(const InstantiateOptions&, const InstantiateOptions&) = default;
};

}  // namespace cudakit::graphs
