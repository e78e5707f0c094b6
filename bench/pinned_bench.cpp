// What a fresh pinned host block costs, by size and by provider: cudaHostAlloc (the default) and
// mmap + parallel page faults + cudaHostRegister (pinned_use_cuda_host_register, See Note
// [Registered pinned memory]) with 1, 8 and 16 faulting threads; and the host-to-device copy rate
// from each, to show the block serves copies as well. bench/torch_pinned_bench.py measures
// torch's CachingHostAllocator the same way. Plain program: medians of a few repetitions.

#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cudakit/core/device.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/core/event.hpp"
#include "cudakit/core/stream.hpp"
#include "cudakit/memory/host/pinned_memory_provider.hpp"
#include "support/timing.hpp"

namespace {

using cudakit::bench::elapsed_us;
using cudakit::bench::median;
using cudakit::memory::PinnedMemoryProvider;

struct Provider {
  std::string label;
  std::unique_ptr<PinnedMemoryProvider> memory;
};

// GB/s of host-to-device copies of `bytes` from `host`, median of 5 timed by events.
double h2d_gb_per_s(const void* host, std::size_t bytes) {
  void* device = nullptr;
  CUDAKIT_CHECK_CUDA(cudaMalloc(&device, bytes));
  cudakit::Stream stream;
  CUDAKIT_CHECK_CUDA(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, stream.handle()));
  std::vector<double> rates;
  for (int i = 0; i < 5; ++i) {
    cudakit::Event start(cudakit::EventFlags{.enable_timing = true});
    cudakit::Event stop(cudakit::EventFlags{.enable_timing = true});
    start.record(stream);
    CUDAKIT_CHECK_CUDA(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, stream.handle()));
    stop.record(stream);
    stop.synchronize();
    rates.push_back(static_cast<double>(bytes) / (start.elapsed_time(stop) / 1e3) / 1e9);
  }
  CUDAKIT_CHECK_CUDA(cudaFree(device));
  return median(std::move(rates));
}

}  // namespace

// Usage: pinned_bench [PREFIX]: only the providers whose label starts with PREFIX
// ("cudaHostAlloc", "register").
int main(int argc, char** argv) {
  const std::string only = argc > 1 ? argv[1] : "";
  if (!cudakit::is_available()) {
    std::printf("no CUDA device: pinned memory benchmark skipped\n");
    return 0;
  }
  cudakit::set_device(0);
  CUDAKIT_CHECK_CUDA(cudaFree(nullptr));
  std::vector<Provider> providers;
  providers.push_back({"cudaHostAlloc", cudakit::memory::make_cuda_pinned_memory_provider()});
  for (unsigned threads : {1u, 8u, 16u}) {
    providers.push_back({"register, " + std::to_string(threads) + " threads",
                         cudakit::memory::make_registered_pinned_memory_provider(threads)});
  }
  std::erase_if(providers, [&](const Provider& p) { return !p.label.starts_with(only); });
  std::printf("%-22s %8s %14s %12s %10s\n", "provider", "MiB", "allocate ms", "free ms", "H2D GB/s");
  for (std::size_t mib : {16, 256, 1024, 4096}) {
    const std::size_t bytes = mib << 20;
    const int reps = mib >= 1024 ? 3 : 5;
    for (Provider& p : providers) {
      // Each block is freed before the next is made, as torch_pinned_bench.py does.
      std::vector<double> alloc_us, free_us;
      double rate = 0;
      for (int r = 0; r < reps; ++r) {
        void* block = nullptr;
        alloc_us.push_back(elapsed_us([&] { block = p.memory->allocate(bytes); }));
        if (block == nullptr) {
          std::printf("%-22s %8zu: out of memory\n", p.label.c_str(), mib);
          return 1;
        }
        free_us.push_back(elapsed_us([&] { p.memory->free(block); }));
      }
      if (mib == 1024) {  // after the timed blocks, so that the copies' cudaMalloc is not among them
        if (void* block = p.memory->allocate(bytes)) {
          rate = h2d_gb_per_s(block, bytes);
          p.memory->free(block);
        }
      }
      std::printf("%-22s %8zu %14.2f %12.2f %10s\n", p.label.c_str(), mib, median(alloc_us) / 1e3,
                  median(free_us) / 1e3, rate > 0 ? std::to_string(rate).substr(0, 5).c_str() : "");
    }
  }
  return 0;
}
