#pragma once
// launch_through_graph: a kernel launch queued as a one-node CUDA graph that the calling thread
// keeps per stream, its parameters updated in place. See Note [Launching through a one-node
// graph] in src/core/graph_launcher.cpp.

#include <cuda.h>

#include <cstdint>
#include <span>

namespace cudakit::detail {

struct GraphKernelLaunch {
  CUfunction function = nullptr;
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  unsigned shared_bytes = 0;
  CUstream stream = nullptr;
  void** parameters = nullptr;  // cuLaunchKernel's kernelParams
  // The parameters' values, when they are all in one array: a launch whose function, dimensions
  // and values equal the previous one's on that stream needs no update of the node. Empty: the
  // node is always updated (parameters that are structs elsewhere in memory).
  std::span<const std::uint64_t> values;
};

// Queues `launch` on its stream through this thread's graph for that stream and returns true;
// or returns false having queued nothing, and the caller launches it itself: when the stream is
// capturing (the capture must record a kernel node), when graph launches are off
// (CUDAKIT_LAUNCH_GRAPHS=0, or set_graph_launches), for the thread's first launch on the stream
// (the second makes the graph), or when a graph call failed for this stream (it is then not
// tried again there).
bool launch_through_graph(const GraphKernelLaunch& launch);

// On by default; CUDAKIT_LAUNCH_GRAPHS=0 turns them off for the process. Tests switch them.
bool graph_launches_enabled() noexcept;
void set_graph_launches(bool enabled) noexcept;

// The calling thread's counts, for tests and benchmarks.
struct GraphLaunchCounters {
  std::uint64_t launches = 0;        // kernels queued through a graph
  std::uint64_t updates = 0;         // of those, the ones that changed the node's parameters
  std::uint64_t instantiations = 0;  // graphs made (one per stream in use, a few at most)
  std::uint64_t declined = 0;        // launches handed back to the caller
};
GraphLaunchCounters graph_launch_counters() noexcept;

}  // namespace cudakit::detail
