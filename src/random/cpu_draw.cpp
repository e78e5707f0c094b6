// The CPU reference path: the same functors as the kernels, in a host loop.

#include <algorithm>
#include <thread>
#include <vector>

#include "random/detail/draw.hpp"

namespace cudakit::random::detail {

void cpu_draw(const DrawRequest& request, const DrawTarget& target, std::uint64_t seed,
              std::uint64_t offset) {
  with_distribution(request, [&](auto dist) {
    using Dist = decltype(dist);
    using T = typename Dist::value_type;
    constexpr int K = Dist::kPerCall;
    T* out = static_cast<T*>(target.data);
    const std::int64_t n = target.numel;
    const std::uint64_t blocks = (static_cast<std::uint64_t>(n) + K - 1) / K;
    const auto run = [&](std::uint64_t begin, std::uint64_t end) {
      for (std::uint64_t j = begin; j < end; ++j) {
        T v[K];
        dist(philox_block(seed, offset + j), v);
        for (int k = 0; k < K; ++k) {
          const auto i = static_cast<std::int64_t>(j * K + k);
          if (i < n) out[target.contiguous ? i : target.index.offset(i)] = v[k];
        }
      }
    };
    // Counters are independent, so large draws are split over threads; the bits are the same.
    constexpr std::uint64_t kBlocksPerThread = 1u << 16;
    const auto threads = static_cast<std::uint64_t>(std::clamp<std::uint64_t>(
        std::min<std::uint64_t>(std::thread::hardware_concurrency(), blocks / kBlocksPerThread),
        1, 64));
    if (threads == 1) {
      run(0, blocks);
      return;
    }
    std::vector<std::thread> workers;
    const std::uint64_t per = (blocks + threads - 1) / threads;
    for (std::uint64_t t = 0; t < threads; ++t) {
      const std::uint64_t begin = t * per, end = std::min(blocks, begin + per);
      if (begin < end) workers.emplace_back(run, begin, end);
    }
    for (auto& w : workers) w.join();
  });
}

}  // namespace cudakit::random::detail
