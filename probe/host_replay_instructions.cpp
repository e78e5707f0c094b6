// Host probe (not part of the build): one trace replayed REPS times on one CachingAllocator on
// simulated memory (every event complete), empty_cache() between replays, as alloc_bench's in-turn
// rows replay it, for callgrind's instruction counts of two libraries on the same operations: the
// difference between REPS 3 and 1, halved, is one replay's (start-up and the trace's reading
// cancel). 6 GiB of simulated memory: valgrind refuses larger reservations.
//   g++ -O2 -std=c++20 -pthread -IDIR/include -I/usr/local/cuda/include probe/host_replay_instructions.cpp \
//       -LDIR/lib -lcudakit -Wl,-rpath,DIR/lib -o /tmp/replay_instructions
//   valgrind --tool=callgrind /tmp/replay_instructions tests/data/alloc-traces/trace_gpt_train.csv.gz 3
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "cudakit/memory/alloc_trace.hpp"
#include "cudakit/memory/caching_allocator.hpp"
#include "cudakit/memory/host_segment_provider.hpp"

using namespace cudakit::memory;

int main(int argc, char** argv) {
  const AllocTrace trace = load_alloc_trace(argv[1]);
  const int reps = argc > 2 ? std::atoi(argv[2]) : 1;
  CachingAllocator a(0, std::make_shared<HostSegmentProvider>(std::size_t{6} << 30),
                     std::make_shared<HostStreamEvents>(true), AllocatorConfig::parse(""));
  std::vector<void*> live;
  for (int r = 0; r < reps; ++r) {
    for (const AllocTraceOp& op : trace.ops) {
      if (op.slot >= live.size()) live.resize(static_cast<std::size_t>(op.slot) + 1, nullptr);
      const StreamKey stream = 0x1000 * (static_cast<StreamKey>(op.stream) + 1);
      if (op.is_alloc) {
        live[op.slot] = a.allocate(op.size, stream);
      } else {
        a.deallocate(live[op.slot]);
        live[op.slot] = nullptr;
      }
    }
    for (void*& p : live) {
      if (p) a.deallocate(p);
      p = nullptr;
    }
    a.empty_cache();
  }
  std::printf("%zu ops x %d\n", trace.ops.size(), reps);
  return 0;
}
