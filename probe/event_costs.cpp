// Host probe (not part of the build): how many stream-event calls the caching allocator makes
// replaying a trace, and what they would cost at given device prices. Simulated memory and
// events (HostStreamEvents, every event complete at once, as on a GPU that runs no kernels, which
// is what a trace replay queues), each call counted and, with --spin, made to take a given time
// (a busy wait standing for the driver's call), so that the share of a replay's time that event
// calls would take on a device can be read off without one.
//   g++ -O2 -std=c++20 -pthread -Iinclude probe/event_costs.cpp -Lbuild/src -lcudakit \
//       -I/usr/local/cuda/include -Wl,-rpath,$PWD/build/src -o /tmp/event_costs
//   /tmp/event_costs tests/data/alloc-traces/trace_serve_8t.csv.gz [record_ns query_ns idle_ns wait_ns]
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "cudakit/memory/alloc_replay.hpp"
#include "cudakit/memory/caching_allocator.hpp"
#include "cudakit/memory/caching_allocator_replay_target.hpp"
#include "cudakit/memory/host_segment_provider.hpp"

using namespace cudakit::memory;

namespace {
void spin(long ns) {
  if (ns <= 0) return;
  const auto until = std::chrono::steady_clock::now() + std::chrono::nanoseconds(ns);
  while (std::chrono::steady_clock::now() < until) {
  }
}

struct CountingEvents final : HostStreamEvents {
  long record_ns, query_ns, idle_ns, wait_ns;
  std::atomic<long> records{0}, queries{0}, idles{0}, waits{0}, syncs{0};
  CountingEvents(long r, long q, long i, long w) : record_ns(r), query_ns(q), idle_ns(i), wait_ns(w) {}
  Token record(StreamKey s) override { ++records; spin(record_ns); return HostStreamEvents::record(s); }
  bool query(Token t) override { ++queries; spin(query_ns); return HostStreamEvents::query(t); }
  void synchronize(Token t) override { ++syncs; HostStreamEvents::synchronize(t); }
  void make_wait(StreamKey w, Token t) override { ++waits; spin(wait_ns); HostStreamEvents::make_wait(w, t); }
  bool idle(StreamKey s) override { ++idles; spin(idle_ns); return HostStreamEvents::idle(s); }
};
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: event_costs TRACE [record_ns query_ns idle_ns wait_ns]\n");
    return 2;
  }
  const long r = argc > 2 ? std::atol(argv[2]) : 0, q = argc > 3 ? std::atol(argv[3]) : 0,
             i = argc > 4 ? std::atol(argv[4]) : 0, w = argc > 5 ? std::atol(argv[5]) : 0;
  const AllocTrace trace = load_alloc_trace(argv[1]);
  std::vector<StreamKey> streams;
  for (std::uint32_t s = 0; s < 4096; ++s) streams.push_back(static_cast<StreamKey>(s + 1));
  auto events = std::make_shared<CountingEvents>(r, q, i, w);
  CachingAllocator allocator(-1, std::make_shared<HostSegmentProvider>(std::size_t{141} << 30), events,
                             AllocatorConfig::parse("expandable_segments:True"));
  CachingAllocatorReplayTarget target{allocator};
  const ReplayResult result = replay_alloc_trace(target, trace, streams);
  const double ops = static_cast<double>(result.ops);
  std::printf("%s: %.0f ops, %.1f ns/op; per 1000 ops: %.1f records, %.1f queries, %.1f idle checks, "
              "%.1f waits, %.2f host syncs; cross-stream reuses %lld\n",
              argv[1], ops, result.ns_per_op, events->records * 1e3 / ops, events->queries * 1e3 / ops,
              events->idles * 1e3 / ops, events->waits * 1e3 / ops, events->syncs * 1e3 / ops,
              static_cast<long long>(allocator.stats().num_cross_stream_reuses));
  return 0;
}
