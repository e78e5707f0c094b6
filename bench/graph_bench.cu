// Graph replay costs and the profiler's overhead on a replay — timings, so a benchmark and not
// a test. Prints one table; torch's figures for the same quantities are in ANCHORS.md.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string_view>
#include <string>
#include <vector>

#include "cudakit/core/cupti_hub.hpp"
#include "cudakit/core/device.hpp"
#include "cudakit/core/event.hpp"
#include "cudakit/core/stream.hpp"
#include "cudakit/core/stream_guard.hpp"
#include "cudakit/graphs/graph.hpp"
#include "cudakit/graphs/graph_capture.hpp"
#include "cudakit/graphs/kernel_annotation_scope.hpp"
#include "cudakit/memory/device_allocator.hpp"
#include "cudakit/profiler/profiler.hpp"
#include "cudakit/random/distributions.hpp"
#include "cudakit/tensor/elementwise.hpp"
#include "cudakit/tensor/matmul.hpp"
#include "support/timing.hpp"

namespace {
using namespace cudakit;
using bench::median;

__global__ void bump(int* counter) { *counter += 1; }
__global__ void spin(unsigned long long ns) {
  unsigned long long start;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  for (;;) {
    unsigned long long now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    if (now - start >= ns) break;
  }
}

graphs::Graph chain(int kernels, int* counter, unsigned long long spin_ns, bool annotate,
                    graphs::InstantiateOptions flags = {}) {
  graphs::Graph g;
  graphs::GraphCapture capture(g, {.enable_annotations = annotate, .instantiate = flags});
  for (int i = 0; i < kernels; ++i) {
    graphs::mark_kernels region({{"name", "k"}, {"index", i}});
    if (spin_ns) spin<<<1, 1, 0, capture.stream().handle()>>>(spin_ns);
    else bump<<<1, 1, 0, capture.stream().handle()>>>(counter);
  }
  capture.end();
  return g;
}

// Note [Timing a replay on an idle stream]
// Host time of replay() itself, after warm-up, median of 400. Each timed replay starts on an
// idle stream (a synchronize after each, untimed), here and in torch_graph_bench.py. With a
// synchronize every 50 replays instead (`queued`), how much work waited on the GPU when a replay
// was timed depended on the loop around replay(): C++ here, Python there, whose own time between
// replays let the GPU catch up. That shape is still printed beside, for comparison.
double replay_host_us(graphs::Graph& g, StreamRef s, bool queued = false) {
  for (int i = 0; i < 50; ++i) g.replay(s);
  s.synchronize();
  std::vector<double> us;
  for (int i = 0; i < 400; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    g.replay(s);
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    if (!queued || i % 50 == 49) s.synchronize();
  }
  s.synchronize();
  return median(us);
}

// GPU time of `replays` back-to-back replays, best of 5.
double replay_gpu_ms(graphs::Graph& g, StreamRef s, int replays) {
  double best = 1e30;
  for (int trial = 0; trial < 5; ++trial) {
    Event begin({.enable_timing = true}), end({.enable_timing = true});
    begin.record(s);
    for (int i = 0; i < replays; ++i) g.replay(s);
    end.record(s);
    end.synchronize();
    best = std::min<double>(best, begin.elapsed_time(end));
  }
  return best;
}

// Replay host time of the 8-kernel graph by instantiation flags (none, torch's) and by the stream
// a replay is launched on (a cudakit Stream, non-blocking; the legacy default stream, where
// torch_graph_bench.py replays): four variants in one process, in turn, 10 rounds of 100 timed
// replays each, each replay on an idle stream (Note [Timing a replay on an idle stream]). Which
// of these the gap to torch's replay follows: Note [Instantiation flags] in src/graphs/graph.cpp.
void replay_variants(int* counter, StreamRef side) {
  struct Variant {
    const char* name;
    graphs::Graph graph;
    StreamRef stream;
    std::vector<double> us;
  };
  const graphs::InstantiateOptions none{.auto_free_on_launch = false, .use_node_priority = false};
  const StreamRef legacy(nullptr, side.device());
  Variant variants[] = {{"no flags, cudakit stream", chain(8, counter, 0, false, none), side, {}},
                        {"torch's flags, cudakit stream", chain(8, counter, 0, false), side, {}},
                        {"no flags, legacy default stream", chain(8, counter, 0, false, none), legacy, {}},
                        {"torch's flags, legacy default stream", chain(8, counter, 0, false), legacy, {}}};
  for (Variant& v : variants) {
    for (int i = 0; i < 50; ++i) v.graph.replay(v.stream);
    v.stream.synchronize();
  }
  for (int round = 0; round < 10; ++round) {
    for (Variant& v : variants) {
      for (int i = 0; i < 100; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        v.graph.replay(v.stream);
        v.us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
        v.stream.synchronize();
      }
    }
  }
  for (const Variant& v : variants) {
    std::printf("replay() host time, 8-kernel graph, %-37s %6.2f us (median of 1000, in turn)\n",
                (std::string(v.name) + ":").c_str(), median(v.us));
  }
}

}  // namespace

// `graph_bench --host-times`: the two replay host-time rows alone, for the further processes
// scripts/device-bench.sh runs (Note [Host times over processes] there).
int main(int argc, char** argv) {
  if (!is_available()) {
    std::printf("no CUDA device: graph benchmark skipped\n");
    return 0;
  }
  const bool host_times_only = argc > 1 && std::string_view(argv[1]) == "--host-times";
  Stream stream;
  StreamGuard on(stream);
  int* counter = static_cast<int*>(memory::allocate(sizeof(int)));

  graphs::Graph eight = chain(8, counter, 0, false);
  std::printf("replay() host time, 8-kernel graph:                     %6.2f us (median of 400)\n",
              replay_host_us(eight, stream));
  std::printf("replay() host time, 8-kernel graph, up to 50 queued:    %6.2f us (median of 400)\n",
              replay_host_us(eight, stream, true));
  graphs::Graph draws;
  tensor::Tensor out;
  {
    graphs::GraphCapture capture(draws);
    out = random::rand({4096}, {tensor::DType::float32, tensor::Device::cuda()});
  }
  std::printf("replay() host time, graph drawing random numbers:       %6.2f us (median of 400)\n",
              replay_host_us(draws, stream));
  replay_variants(counter, stream);
  if (host_times_only) {
    memory::deallocate(counter);
    return 0;
  }

  graphs::Graph thousand = chain(1000, counter, 0, false);
  replay_gpu_ms(thousand, stream, 1);
  std::printf("1000-kernel replay, GPU time per tiny dependent kernel: %6.3f us (torch: 1.14 us)\n",
              replay_gpu_ms(thousand, stream, 10) * 1000.0 / 10000.0);

  graphs::Graph plain = chain(200, counter, 0, false);
  graphs::Graph annotated = chain(200, counter, 0, true);
  replay_gpu_ms(plain, stream, 2);
  const double without = replay_gpu_ms(plain, stream, 20), with = replay_gpu_ms(annotated, stream, 20);
  std::printf("20 replays x 200 kernels: %.3f ms plain, %.3f ms annotated (%+.2f%%)\n", without, with,
              (with / without - 1) * 100);

  if (CuptiHub::instance().available()) {
    for (unsigned long long ns : {0ull, 10'000ull, 50'000ull}) {
      graphs::Graph g = chain(1000, counter, ns, false);
      replay_gpu_ms(g, stream, 1);
      const double base = replay_gpu_ms(g, stream, 3);
      double profiled = 0;
      {
        profiler::Profiler warm;  // CUPTI's first-use setup stays out of the measurement
        g.replay(stream);
        warm.stop();
        profiler::Profiler p;
        profiled = replay_gpu_ms(g, stream, 3);
        p.stop();
      }
      std::printf("profiling 3 replays x 1000 kernels of %2llu us: %8.3f ms -> %8.3f ms (%+.1f%%, %.2f us per kernel)\n",
                  ns / 1000, base, profiled, (profiled / base - 1) * 100, (profiled - base) * 1000 / 3000);
    }
    // The seed workflow's graph (examples/graph_annotations.hpp): x @ x.t(), then relu(y) @ x,
    // float32 1024 x 1024 (no TF32), annotated as the demo annotates it.
    const tensor::TensorOptions on_gpu{tensor::DType::float32, tensor::Device::cuda()};
    tensor::Tensor x = random::randn({1024, 1024}, on_gpu), y, z;
    y = tensor::matmul(x, x.t());  // warm-up: cuBLAS handle, workspace, kernels loaded
    z = tensor::matmul(tensor::relu(y), x);
    stream.synchronize();
    graphs::Graph seed;
    {
      graphs::GraphCapture capture(seed, {.enable_annotations = true});
      {
        graphs::mark_kernels region("attention");
        y = tensor::matmul(x, x.t());
      }
      graphs::mark_kernels region({{"name", "mlp"}, {"layer", 3}});
      z = tensor::matmul(tensor::relu(y), x);
    }
    // Note [An overhead of about one percent]
    // The overhead is a percent or so of the replays' GPU time, near the spread of one timing of
    // them, so one timing with and one without compared two noises (notes/performance-rows.md).
    // Each side therefore alternates five rounds of (without, with) and reports the median
    // round's ratio, to two decimals (torch_graph_bench.py does the same).
    replay_gpu_ms(seed, stream, 5);
    {
      profiler::Profiler warm;  // CUPTI's first-use setup stays out of the measurement
      seed.replay(stream);
      warm.stop();
    }
    std::vector<double> bases, profileds, ratios;
    for (int round = 0; round < 5; ++round) {
      bases.push_back(replay_gpu_ms(seed, stream, 100));
      profiler::Profiler p;
      profileds.push_back(replay_gpu_ms(seed, stream, 100));
      p.stop();
      ratios.push_back(profileds.back() / bases.back());
    }
    std::printf("profiling 100 replays of the seed workflow's graph: %8.3f ms -> %8.3f ms (%+.2f%%), median of 5 rounds\n",
                median(bases), median(profileds), (median(ratios) - 1) * 100);
  } else {
    std::printf("profiler overhead: CUPTI unavailable (%s)\n", CuptiHub::instance().reason().c_str());
  }
  memory::deallocate(counter);
  return 0;
}
