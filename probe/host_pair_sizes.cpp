// Host probe (not part of the build): one thread's alloc+free pairs of one size on one stream,
// through a CachingAllocator on simulated memory (HostSegmentProvider, HostStreamEvents), in ns
// a pair. Built against two trees' libcudakit, it tells a change of the allocator's own code from
// one of its CUDA path: run both builds on the GPU machine beside alloc_bench's pair rows.
//   g++ -O2 -std=c++20 -pthread -Iinclude -I/usr/local/cuda/include probe/host_pair_sizes.cpp \
//       -Lbuild/src -lcudakit -Wl,-rpath,$PWD/build/src -o /tmp/host_pair_sizes
//   CONF=expandable_segments:True OTHER=1 /tmp/host_pair_sizes [BYTES [PAIRS]]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <utility>
#include <vector>

#include "cudakit/memory/caching_allocator.hpp"
#include "cudakit/memory/host_segment_provider.hpp"

using namespace cudakit::memory;

int main(int argc, char** argv) {
  const std::size_t bytes = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : std::size_t{1} << 20;
  const long pairs = argc > 2 ? std::atol(argv[2]) : 20000000;
  const char* conf = std::getenv("CONF");
  auto provider = std::make_shared<HostSegmentProvider>(8ull << 30);
  auto events = std::make_shared<HostStreamEvents>(true);
  CachingAllocator a(0, provider, events, AllocatorConfig::parse(conf ? conf : ""));
  const StreamKey stream = 0x1000;
  // OTHER=N: N other streams hold a block each meanwhile, so that the device has several shards
  // (and its ledger of device-wide peaks is on: Note [Device-wide peaks]).
  const int others = std::getenv("OTHER") ? std::atoi(std::getenv("OTHER")) : 0;
  std::vector<std::pair<void*, StreamKey>> held;
  for (int i = 0; i < others; ++i) {
    const StreamKey other = 0x2000 + 0x1000 * static_cast<StreamKey>(i);
    held.emplace_back(a.allocate(bytes, other), other);
  }
  for (int i = 0; i < 1000; ++i) a.deallocate(a.allocate(bytes, stream));
  const auto start = std::chrono::steady_clock::now();
  for (long i = 0; i < pairs; ++i) a.deallocate(a.allocate(bytes, stream));
  const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
  std::printf("%zu B, %d other streams: %.2f ns a pair\n", bytes, others, ns / static_cast<double>(pairs));
  for (const auto& [p, other] : held) a.deallocate(p);
  return 0;
}
