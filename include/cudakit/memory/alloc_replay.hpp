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

// From an empty cache; trace stream i runs on streams[i % streams.size()]. Frees whatever the
// trace leaves live, then empties the cache again.
template <class Allocator, class Stream>
ReplayResult replay_alloc_trace(Allocator& a, const AllocTrace& trace, const std::vector<Stream>& streams) {
  std::vector<void*> live(trace.num_ids, nullptr);
  a.empty_cache();
  a.reset_peaks();
  const std::size_t before = a.device_allocations();
  const auto start = std::chrono::steady_clock::now();
  for (const auto& op : trace.ops) {
    const Stream& s = streams[op.stream % streams.size()];
    if (op.is_alloc) {
      live[op.slot] = a.alloc(op.size, s);
    } else {
      a.free(live[op.slot], s);
      live[op.slot] = nullptr;
    }
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
