#pragma once
// Replays an AllocTrace against any allocator with alloc/free/empty_cache/reset_peaks/
// peak_allocated/peak_reserved/device_allocations (see bench/support/alloc_workloads.hpp), so
// `cudakit alloc-replay` and the side-by-side benchmarks time exactly the same loop.

#include <chrono>
#include <cstddef>
#include <vector>

#include "cudakit/memory/alloc_trace.hpp"

namespace cudakit::memory {

struct ReplayResult {
  double ns_per_op = 0;
  std::size_t peak_allocated = 0;
  std::size_t peak_reserved = 0;
  std::size_t device_allocations = 0;
};

// Called after each operation of a replay with its index; the default does nothing and compiles
// away, so the timed loop is the same loop whether or not someone watches it.
struct NoReplayObserver {
  void operator()(std::size_t /*op_index*/) const {}
};

// From an empty cache; trace stream i runs on streams[i % streams.size()]. Frees whatever the
// trace leaves live, then empties the cache again. `observe(i)` runs after operation i (the
// benchmarks' memory-over-time plots sample the allocator's statistics there, in an untimed pass).
template <class Allocator, class Stream, class Observer = NoReplayObserver>
ReplayResult replay_alloc_trace(Allocator& a, const AllocTrace& trace, const std::vector<Stream>& streams,
                                Observer observe = {}) {
  std::vector<void*> live(trace.num_ids, nullptr);
  a.empty_cache();
  a.reset_peaks();
  const std::size_t before = a.device_allocations();
  const auto start = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < trace.ops.size(); ++i) {
    const auto& op = trace.ops[i];
    const Stream& s = streams[op.stream % streams.size()];
    if (op.is_alloc) {
      live[op.slot] = a.alloc(op.size, s);
    } else {
      a.free(live[op.slot], s);
      live[op.slot] = nullptr;
    }
    observe(i);
  }
  const std::chrono::duration<double, std::nano> elapsed = std::chrono::steady_clock::now() - start;
  ReplayResult r;
  r.ns_per_op = elapsed.count() / static_cast<double>(trace.ops.empty() ? 1 : trace.ops.size());
  r.peak_allocated = a.peak_allocated();
  r.peak_reserved = a.peak_reserved();
  r.device_allocations = a.device_allocations() - before;
  for (void* p : live) {
    if (p) a.free(p, streams[0]);
  }
  a.empty_cache();
  return r;
}

}  // namespace cudakit::memory
