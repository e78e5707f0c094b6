#pragma once
// The allocator workloads, written once and run against every allocator compared (cudakit's,
// PyTorch's through its C++ API, cudaMallocAsync, cudaMalloc), so each number in the table is
// measured the same way. Header-only: the PyTorch program is compiled on the GPU machine.
//
// An Allocator provides: void* alloc(size_t, cudaStream_t); void free(void*, cudaStream_t);
// void empty_cache(); void reset_peaks(); size_t peak_allocated(); size_t peak_reserved();
// size_t device_allocations() (segments obtained from the driver so far, 0 if unknown);
// size_t current_allocated(); size_t current_reserved() (for the memory-over-time samples).

#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cudakit/memory/alloc_replay.hpp"
#include "cudakit/memory/alloc_trace.hpp"
#include "support/timing.hpp"

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
  return median(std::move(runs));
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

// Memory over a trace, for the report's plots: an untimed replay that samples the allocator's
// allocated and reserved bytes about `points` times, evenly over the operations, and after the
// last one. One JSON line.
template <class Allocator>
void emit_timeline(const std::string& name, const std::string& label, Allocator& a, const memory::AllocTrace& trace,
                   const std::vector<cudaStream_t>& streams, std::size_t points = 400) {
  const std::size_t every = std::max<std::size_t>(1, trace.ops.size() / points);
  std::vector<double> at, allocated, reserved;
  memory::replay_alloc_trace(a, trace, streams, [&](std::size_t i) {
    if (i % every != 0 && i + 1 != trace.ops.size()) return;
    at.push_back(static_cast<double>(i));
    allocated.push_back(static_cast<double>(a.current_allocated()) / 1048576.0);
    reserved.push_back(static_cast<double>(a.current_reserved()) / 1048576.0);
  });
  std::string line = "{\"allocator\": \"" + name + "\", \"workload\": \"" + label + ".timeline\", \"unit\": \"MiB\"";
  // One JSON array of `values`, `decimals` after the point (op indices: 0, exact below 2^53).
  const auto append_array = [&line](const char* key, const std::vector<double>& values, int decimals) {
    line += std::string(", \"") + key + "\": [";
    char buf[64];
    for (std::size_t k = 0; k < values.size(); ++k) {
      std::snprintf(buf, sizeof buf, "%s%.*f", k ? "," : "", decimals, values[k]);
      line += buf;
    }
    line += "]";
  };
  append_array("op", at, 0);
  append_array("allocated", allocated, 2);
  append_array("reserved", reserved, 2);
  line += "}";
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

// Runs body(t, stop) on `threads` threads at once for `seconds`, started together after one
// warm-up call each (with stop already set); body returns the iterations it completed. Returns
// their sum per second. A fixed duration, not a fixed count: a slow allocator takes no longer to
// measure, and every thread works for the whole window.
template <class Body>
double threaded_rate(int threads, double seconds, Body body) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false}, stop{false}, done{true};
  std::vector<long> counts(threads);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      body(t, done);
      ready.fetch_add(1);
      while (!go.load()) std::this_thread::yield();
      counts[t] = body(t, stop);
    });
  }
  while (ready.load() < threads) std::this_thread::yield();
  const auto start = Clock::now();
  go = true;
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (auto& th : pool) th.join();
  const double elapsed = seconds_since(start);
  double total = 0;
  for (long c : counts) total += static_cast<double>(c);
  return total / elapsed;
}

// Aggregate alloc+free pairs per second of `threads` threads, each on its own stream, or all on
// streams[0] with `one_stream`.
template <class Allocator>
double threaded_pairs_per_second(Allocator& a, int threads, const std::vector<cudaStream_t>& streams,
                                 double seconds, bool one_stream = false) {
  return threaded_rate(threads, seconds, [&](int t, const std::atomic<bool>& stop) {
    cudaSetDevice(0);
    const std::size_t bytes = 4096u << (t % 4);
    const cudaStream_t stream = streams[one_stream ? 0 : t];
    long pairs = 0;
    do {
      for (int i = 0; i < 64; ++i) a.free(a.alloc(bytes, stream), stream);
      pairs += 64;
    } while (!stop.load(std::memory_order_relaxed));
    return pairs;
  });
}

// What the machine allows: the same scaling for a loop that shares nothing between threads
// (xorshift into a private 8 KiB table), in iterations per second.
inline double private_loop_per_second(int threads, double seconds) {
  return threaded_rate(threads, seconds, [](int t, const std::atomic<bool>& stop) {
    std::vector<std::uint64_t> table(1024);
    std::uint64_t x = 88172645463325252ull + static_cast<std::uint64_t>(t);
    long iterations = 0;
    do {
      for (int i = 0; i < 1024; ++i) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        table[x & 1023] += x;
      }
      iterations += 1024;
    } while (!stop.load(std::memory_order_relaxed));
    if (table[x & 1023] == 42) std::printf(" ");  // keeps the loop
    return iterations;
  });
}

inline double best(const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); }

// One JSON object per line: {"allocator": ..., "workload": ..., "value": ..., "unit": ...}
inline void emit(const std::string& allocator, const std::string& workload, double value,
                 const char* unit) {
  std::printf("{\"allocator\": \"%s\", \"workload\": \"%s\", \"value\": %.6g, \"unit\": \"%s\"}\n",
              allocator.c_str(), workload.c_str(), value, unit);
  std::fflush(stdout);
}

// Note [Thread scaling measurement]
// On the lent machines (16 vCPUs of a VM) both the one-thread rate and the 16-thread aggregate
// swing between back-to-back runs: 10.2-16.4 M pairs/s for one thread, 102-149 M/s for sixteen,
// on one machine within a minute; a loop that shares nothing scales 9.8x to 15.1x there. So each
// rate is measured five times, 1 and 16 threads alternating, 0.2 s each, and the best of each
// is compared (the run least disturbed by the rest of the machine); the medians are printed
// too. The private loop above, measured the same way, is the ceiling the machine gives.
template <class Allocator, class MakeStream>
void emit_thread_scaling(const std::string& name, Allocator& a, MakeStream make_stream) {
  constexpr double kSeconds = 0.2;
  std::vector<cudaStream_t> streams(16);
  for (auto& s : streams) s = make_stream();
  std::vector<double> one, sixteen, shared, loop_one, loop_sixteen;
  for (int rep = 0; rep < 5; ++rep) {
    one.push_back(threaded_pairs_per_second(a, 1, streams, kSeconds));
    sixteen.push_back(threaded_pairs_per_second(a, 16, streams, kSeconds));
    shared.push_back(threaded_pairs_per_second(a, 16, streams, kSeconds, /*one_stream=*/true));
    loop_one.push_back(private_loop_per_second(1, kSeconds));
    loop_sixteen.push_back(private_loop_per_second(16, kSeconds));
  }
  emit(name, "threads_1.pairs_per_s", best(one), "1/s");
  emit(name, "threads_16.pairs_per_s", best(sixteen), "1/s");
  emit(name, "threads_16_over_1", best(sixteen) / best(one), "x");
  emit(name, "threads_16_over_1.medians", median(sixteen) / median(one), "x");
  emit(name, "threads_16_one_stream.pairs_per_s", best(shared), "1/s");
  emit(name, "threads_16_over_1.private_loop_ceiling", best(loop_sixteen) / best(loop_one), "x");
}

// Note [Trace replays interleaved]
// Each allocator's rows above come from a process of its own, one replay per trace: on the lent
// machines the same code's ns/op moved by 1.3x (cudakit) to 2x (torch's allocator,
// cudaMallocAsync) between two runs a few minutes apart, so a ratio between processes is not
// the allocators' alone. Here two allocators of one process replay each trace in turn, `reps`
// times each, the order swapped every repetition, every replay from an empty cache; the medians
// are emitted as LABEL.ns_per_op.in_turn_A_B for both (one row of the table per pair), the row
// to compare.
template <class A, class B, class MakeStream>
void emit_interleaved_replays(const std::string& name_a, A& a, const std::string& name_b, B& b,
                              MakeStream make_stream,
                              const std::vector<std::pair<std::string, std::string>>& traces, int reps) {
  for (const auto& [label, path] : traces) {
    const auto trace = memory::load_alloc_trace(path);
    std::vector<cudaStream_t> streams(std::max<std::uint32_t>(trace.num_streams, 1));
    for (auto& s : streams) s = make_stream();
    std::vector<double> times_a, times_b;
    for (int rep = 0; rep < reps; ++rep) {
      const auto time_a = [&] { times_a.push_back(replay(a, trace, streams).ns_per_op); };
      const auto time_b = [&] { times_b.push_back(replay(b, trace, streams).ns_per_op); };
      if (rep % 2 == 0) {
        time_a();
        time_b();
      } else {
        time_b();
        time_a();
      }
    }
    const std::string workload = label + ".ns_per_op.in_turn_" + name_a + "_" + name_b;
    emit(name_a, workload, median(std::move(times_a)), "ns/op");
    emit(name_b, workload, median(std::move(times_b)), "ns/op");
  }
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
    if (std::getenv("CUDAKIT_BENCH_TIMELINES")) emit_timeline(name, label, a, trace, streams);
  }
  // The 1 MiB pair again, now that the traces' streams exist beside the pair's: an allocator that
  // keeps device-wide statistics over several streams (cudakit's ledger, Note [Device-wide peaks])
  // pays for it here, not in the pair rows above.
  emit(name, "pair_1MiB_beside_other_streams", pair_ns(a, 1u << 20, stream), "ns");
  if (include_threads) emit_thread_scaling(name, a, make_stream);
}

}  // namespace cudakit::bench
