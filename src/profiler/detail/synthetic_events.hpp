#pragma once
// A made-up recording shaped like a profiled graph replay, for the host-tier tests and the
// export benchmark (which need no GPU): one cudaGraphLaunch per `kernels_per_launch` kernels,
// kernels back to back on one stream with distinct graph node ids, a memset per launch, and a
// record_function range around each launch.

#include <string>

#include "cudakit/profiler/trace_events.hpp"

namespace cudakit::profiler::detail {

// Graph node ids as CUDA reports them: graph id in the high 32 bits, node index in the low.
inline std::uint64_t synthetic_node_id(std::uint32_t graph, std::uint32_t node) {
  return (std::uint64_t{graph} << 32) | node;
}

inline TraceEvents synthetic_events(std::size_t kernels, std::size_t kernels_per_launch = 1000) {
  static const std::string kNames[] = {
      "void gemm_kernel<float, 128, 128>(float const*, float const*, float*, int)",
      "relu_kernel(float*, long)",
      "void reduce<\"quoted\\name\">(float*)",  // escapes must survive export
  };
  TraceEvents events;
  events.process_id = 4242;
  const std::uint64_t base = 1'759'300'000'000'000'000ull;
  std::uint64_t gpu_clock = base + 5'000;
  std::uint32_t correlation = 0;
  std::uint32_t graph = 0;
  for (std::size_t i = 0; i < kernels; ++i) {
    const std::size_t node = i % kernels_per_launch;
    if (node == 0) {
      ++correlation;
      ++graph;
      const std::uint64_t launch = gpu_clock - 4'000;
      events.runtime.push_back({"cudaGraphLaunch", launch, launch + 3'125, 4243, correlation, 311});
      events.ranges.push_back({"replay", launch - 500, launch + 3'500, 4243});
    }
    KernelEvent k;
    k.name = kNames[i % 3];
    k.start_ns = gpu_clock;
    k.end_ns = gpu_clock + 1'000 + static_cast<std::uint64_t>(i % 7) * 111;
    gpu_clock = k.end_ns + 250;
    k.stream = 7;
    k.correlation = correlation;
    k.grid[0] = 8 + static_cast<std::int32_t>(i % 5);
    k.grid[1] = k.grid[2] = 1;
    k.block[0] = 256;
    k.block[1] = k.block[2] = 1;
    k.registers_per_thread = 32;
    k.static_shared_memory = 1024;
    k.dynamic_shared_memory = 2048;
    k.graph_id = graph;
    k.graph_node_id = synthetic_node_id(graph, static_cast<std::uint32_t>(node + 1));
    events.kernels.push_back(std::move(k));
    if (node + 1 == kernels_per_launch || i + 1 == kernels) {
      MemoryOpEvent fill;
      fill.type = MemoryOpEvent::Type::memset;
      fill.name = "Memset (Device)";
      fill.start_ns = gpu_clock;
      fill.end_ns = gpu_clock + 700;
      gpu_clock = fill.end_ns + 250;
      fill.stream = 7;
      fill.correlation = correlation;
      fill.bytes = 4096;
      fill.graph_id = graph;
      fill.graph_node_id = synthetic_node_id(graph, static_cast<std::uint32_t>(kernels_per_launch + 1));
      events.memory_ops.push_back(std::move(fill));
    }
  }
  return events;
}

}  // namespace cudakit::profiler::detail
