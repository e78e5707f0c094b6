// Host probe (not part of the build): alloc+free pairs per second of the caching allocator on
// simulated memory, one thread, and N threads sharing one stream with a size each, to compare two
// builds of libcudakit on a machine without a GPU.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <thread>
#include <vector>

#include "cudakit/memory/caching_allocator.hpp"
#include "cudakit/memory/host_segment_provider.hpp"

using namespace cudakit::memory;

static double pairs_per_second(CachingAllocator& a, int threads, double seconds, bool shared_stream) {
  std::atomic<bool> go{false}, stop{false};
  std::vector<long> counts(threads * 16);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      const std::size_t bytes = 4096u << (t % 4);
      const StreamKey stream = shared_stream ? 0x1000 : 0x1000 * (t + 1);
      while (!go.load()) {}
      long n = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        for (int i = 0; i < 64; ++i) a.deallocate(a.allocate(bytes, stream));
        n += 64;
      }
      counts[t * 16] = n;
    });
  }
  auto start = std::chrono::steady_clock::now();
  go = true;
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (auto& th : pool) th.join();
  double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  long total = 0;
  for (int t = 0; t < threads; ++t) total += counts[t * 16];
  return total / el;
}

int main() {
  auto provider = std::make_shared<HostSegmentProvider>(8ull << 30);
  auto events = std::make_shared<HostStreamEvents>(true);
  CachingAllocator a(0, provider, events, AllocatorConfig{});
  for (int rep = 0; rep < 5; ++rep) {
    double one = pairs_per_second(a, 1, 0.3, true);
    double two_shared = pairs_per_second(a, 2, 0.3, true);
    double four_shared = pairs_per_second(a, 4, 0.3, true);
    double sixteen_shared = pairs_per_second(a, 16, 0.3, true);
    std::printf("1 thread %.2f M/s (%.1f ns/pair)  2 threads one stream %.2f M/s  4 threads one stream %.2f M/s  "
                "16 threads one stream %.2f M/s\n",
                one / 1e6, 1e9 / one, two_shared / 1e6, four_shared / 1e6, sixteen_shared / 1e6);
  }
}
