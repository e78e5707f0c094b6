#pragma once
// The allocator workloads, written once and run against every allocator compared (cudakit's,
// PyTorch's through its C++ API, cudaMallocAsync, cudaMalloc), so each number in the table is
// measured the same way. Header-only: the PyTorch program is compiled on the GPU machine.
//
// An Allocator provides: void* alloc(size_t, cudaStream_t); void free(void*, cudaStream_t);
// void empty_cache(); void reset_peaks(); size_t peak_allocated(); size_t peak_reserved();
// size_t device_allocations() (segments obtained from the driver so far, 0 if unknown).

#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cudakit/memory/alloc_replay.hpp"
#include "cudakit/memory/alloc_trace.hpp"

namespace cudakit::bench {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// ns per alloc+free pair of one size on one stream; median of 5 runs of `pairs` pairs.
template <class Allocator>
double pair_ns(Allocator& a, std::size_t bytes, cudaStream_t stream, int pairs = 200000) {
  std::vector<double> runs;
  // One unmeasured run first: it warms the cache and lets the CPU leave its idle clock (the
  // first workload of a process otherwise read 30-50% slow in one of our runs).
  for (int w = 0; w < pairs; ++w) a.free(a.alloc(bytes, stream), stream);
  for (int r = 0; r < 5; ++r) {
    const auto start = Clock::now();
    for (int i = 0; i < pairs; ++i) a.free(a.alloc(bytes, stream), stream);
    runs.push_back(seconds_since(start) * 1e9 / pairs);
  }
  std::sort(runs.begin(), runs.end());
  return runs[2];
}

// Mixed-size churn: 64 live slots, sizes log-uniform in [256 B, 8 MiB] from a fixed seed; each
// step frees one slot and allocates a new size into it. Returns ns per operation (an alloc or a
// free), after one warm-up pass over the same sequence.
template <class Allocator>
double churn_ns_per_op(Allocator& a, cudaStream_t stream, int steps = 400000) {
  constexpr int kSlots = 64;
  std::mt19937_64 rng(12345);
  std::uniform_real_distribution<double> log_size(std::log(256.0), std::log(8.0 * 1048576));
  std::uniform_int_distribution<int> pick(0, kSlots - 1);
  std::vector<std::size_t> sizes(steps);
  std::vector<int> slots(steps);
  for (int i = 0; i < steps; ++i) {
    sizes[i] = static_cast<std::size_t>(std::exp(log_size(rng)));
    slots[i] = pick(rng);
  }
  std::vector<void*> live(kSlots, nullptr);
  double best = 1e30;
  for (int pass = 0; pass < 3; ++pass) {
    const auto start = Clock::now();
    long ops = 0;
    for (int i = 0; i < steps; ++i) {
      void*& slot = live[slots[i]];
      if (slot) {
        a.free(slot, stream);
        ++ops;
      }
      slot = a.alloc(sizes[i], stream);
      ++ops;
    }
    const double ns = seconds_since(start) * 1e9 / ops;
    if (pass > 0) best = std::min(best, ns);  // pass 0 warms the cache
  }
  for (void*& p : live) {
    if (p) a.free(p, stream);
    p = nullptr;
  }
  return best;
}

using memory::ReplayResult;

template <class Allocator>
ReplayResult replay(Allocator& a, const memory::AllocTrace& trace,
                    const std::vector<cudaStream_t>& streams) {
  return memory::replay_alloc_trace(a, trace, streams);
}

// Aggregate alloc+free pairs per second of `threads` threads, each on its own stream.
template <class Allocator, class MakeStream>
double threaded_pairs_per_second(Allocator& a, int threads, MakeStream make_stream,
                                 int pairs_per_thread = 1000000) {
  std::vector<cudaStream_t> streams(threads);
  for (auto& s : streams) s = make_stream();
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> pool;
  std::vector<double> elapsed(threads);
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      cudaSetDevice(0);
      const std::size_t bytes = 4096u << (t % 4);
      for (int w = 0; w < 100; ++w) a.free(a.alloc(bytes, streams[t]), streams[t]);
      ready.fetch_add(1);
      while (!go.load()) std::this_thread::yield();
      const auto start = Clock::now();
      for (int i = 0; i < pairs_per_thread; ++i) a.free(a.alloc(bytes, streams[t]), streams[t]);
      elapsed[t] = seconds_since(start);
    });
  }
  while (ready.load() < threads) std::this_thread::yield();
  const auto start = Clock::now();
  go = true;
  for (auto& th : pool) th.join();
  const double wall = seconds_since(start);
  return static_cast<double>(pairs_per_thread) * threads / wall;
}

// One JSON object per line: {"allocator": ..., "workload": ..., "value": ..., "unit": ...}
inline void emit(const std::string& allocator, const std::string& workload, double value,
                 const char* unit) {
  std::printf("{\"allocator\": \"%s\", \"workload\": \"%s\", \"value\": %.6g, \"unit\": \"%s\"}\n",
              allocator.c_str(), workload.c_str(), value, unit);
  std::fflush(stdout);
}

// Runs every workload against `a` and emits the results under `name`.
template <class Allocator, class MakeStream>
void run_all_workloads(const std::string& name, Allocator& a, MakeStream make_stream,
                       const std::vector<std::pair<std::string, std::string>>& traces,
                       bool include_threads = true) {
  cudaStream_t stream = make_stream();
  for (auto [label, bytes] : {std::pair<const char*, std::size_t>{"pair_512B", 512},
                              {"pair_1MiB", 1u << 20}, {"pair_64MiB", 64u << 20}}) {
    emit(name, label, pair_ns(a, bytes, stream), "ns");
  }
  emit(name, "churn_64_slots", churn_ns_per_op(a, stream), "ns/op");
  for (const auto& [label, path] : traces) {
    const auto trace = memory::load_alloc_trace(path);
    std::vector<cudaStream_t> streams(std::max<std::uint32_t>(trace.num_streams, 1));
    for (auto& s : streams) s = make_stream();
    const ReplayResult r = replay(a, trace, streams);
    emit(name, label + ".ns_per_op", r.ns_per_op, "ns/op");
    emit(name, label + ".peak_allocated_MiB", r.peak_allocated / 1048576.0, "MiB");
    emit(name, label + ".peak_reserved_MiB", r.peak_reserved / 1048576.0, "MiB");
    emit(name, label + ".peak_requested_MiB", trace.peak_requested_bytes / 1048576.0, "MiB");
    emit(name, label + ".device_allocations", static_cast<double>(r.device_allocations), "");
  }
  if (include_threads) {
    const double one = threaded_pairs_per_second(a, 1, make_stream);
    const double sixteen = threaded_pairs_per_second(a, 16, make_stream);
    emit(name, "threads_1.pairs_per_s", one, "1/s");
    emit(name, "threads_16.pairs_per_s", sixteen, "1/s");
    emit(name, "threads_16_over_1", sixteen / one, "x");
  }
}

}  // namespace cudakit::bench
