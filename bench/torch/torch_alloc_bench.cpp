// PyTorch's caching allocator, driven from C++ through its own API (c10_cuda), on the same
// workloads as bench/alloc_bench.cpp. Built on the GPU machine against the installed torch by
// bench/torch/build_and_run.sh.

#include <c10/cuda/CUDACachingAllocator.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "support/alloc_allocators.hpp"
#include "support/alloc_workloads.hpp"

namespace {
namespace alloc = c10::cuda::CUDACachingAllocator;

struct TorchAllocator {
  void* alloc(std::size_t bytes, cudaStream_t stream) { return alloc::raw_alloc_with_stream(bytes, stream); }
  void free(void* p, cudaStream_t) { alloc::raw_delete(p); }
  void empty_cache() { alloc::emptyCache(); }
  void reset_peaks() { alloc::resetPeakStats(0); }
  std::size_t peak_allocated() {
    return alloc::getDeviceStats(0).allocated_bytes[static_cast<int>(c10::CachingAllocator::StatType::AGGREGATE)].peak;
  }
  std::size_t peak_reserved() {
    return alloc::getDeviceStats(0).reserved_bytes[static_cast<int>(c10::CachingAllocator::StatType::AGGREGATE)].peak;
  }
  std::size_t current_allocated() {
    return alloc::getDeviceStats(0).allocated_bytes[static_cast<int>(c10::CachingAllocator::StatType::AGGREGATE)].current;
  }
  std::size_t current_reserved() {
    return alloc::getDeviceStats(0).reserved_bytes[static_cast<int>(c10::CachingAllocator::StatType::AGGREGATE)].current;
  }
  std::size_t device_allocations() {
    return alloc::getDeviceStats(0).segment[static_cast<int>(c10::CachingAllocator::StatType::AGGREGATE)].allocated;
  }
};
}  // namespace

int main(int argc, char** argv) {
  cudaSetDevice(0);
  cudaFree(nullptr);
  alloc::init(1);
  std::vector<std::pair<std::string, std::string>> traces;
  int interleaved_reps = 0;  // --interleaved N: also cudakit and torch in turn (Note [Trace replays interleaved])
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::string(argv[i]) == "--interleaved") {
      interleaved_reps = std::atoi(argv[i + 1]);
    } else {
      traces.emplace_back(argv[i], argv[i + 1]);
    }
  }
  TorchAllocator a;
  auto make_stream = [] {
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    return s;
  };
  const char* name = std::getenv("PYTORCH_CUDA_ALLOC_CONF");
  cudakit::bench::run_all_workloads(name && *name ? std::string("torch[") + name + "]" : "torch", a,
                                    make_stream, traces);
  if (interleaved_reps > 0) {
    cudakit::bench::CudakitAllocator cudakit_allocator;
    cudakit::bench::emit_interleaved_replays("cudakit", cudakit_allocator, "torch", a, make_stream, traces,
                                             interleaved_reps);
  }
  return 0;
}
