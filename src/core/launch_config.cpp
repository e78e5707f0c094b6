#include "cudakit/core/launch_config.hpp"

#include <algorithm>
#include <array>
#include <atomic>

#include "cudakit/core/device.hpp"
#include "cudakit/core/error.hpp"

namespace cudakit {

int multiprocessor_count(int device) {
  // Cached per ordinal: cudaDeviceGetAttribute is cheap but not free, and this runs per launch.
  static std::array<std::atomic<int>, 64> cache{};
  if (device >= 0 && device < static_cast<int>(cache.size())) {
    if (const int known = cache[device].load(std::memory_order_relaxed); known > 0) return known;
  }
  int count = 0;
  CUDAKIT_CHECK_CUDA(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device));
  if (device >= 0 && device < static_cast<int>(cache.size())) cache[device].store(count);
  return count;
}

unsigned grid_for(std::int64_t work_items, int device, int blocks_per_sm) {
  const std::int64_t needed = (work_items + kBlockThreads - 1) / kBlockThreads;
  const std::int64_t resident =
      static_cast<std::int64_t>(multiprocessor_count(device)) * blocks_per_sm;
  return static_cast<unsigned>(std::max<std::int64_t>(1, std::min(needed, resident)));
}

}  // namespace cudakit
