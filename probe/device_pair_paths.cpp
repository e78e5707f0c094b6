// Device probe (not part of the build): one thread's 1 MiB alloc+free pairs on one stream, in ns a
// pair, through three paths of the same libcudakit in one process, alternating, five rounds: the
// device-wide allocator's front (memory::allocate / deallocate, as alloc_bench's pair rows), a
// CachingAllocator of its own on CUDA memory and events (CudaSegmentProvider, CudaStreamEvents),
// and one on simulated memory (HostSegmentProvider, HostStreamEvents). Built against two trees'
// include/ and libcudakit, it tells which layer a difference between them lives in.
//   g++ -O2 -std=c++20 -pthread -IDIR/include -I/usr/local/cuda/include probe/device_pair_paths.cpp \
//       -LDIR/lib -lcudakit -L/usr/local/cuda/lib64 -lcudart -Wl,-rpath,DIR/lib -o /tmp/pair_paths
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "cudakit/core/stream_ref.hpp"
#include "cudakit/memory/caching_allocator.hpp"
#include "cudakit/memory/cuda_segment_provider.hpp"
#include "cudakit/memory/device_allocator.hpp"
#include "cudakit/memory/host_segment_provider.hpp"

using namespace cudakit::memory;

namespace {
template <class Pair>
double ns_a_pair(Pair pair, long pairs) {
  for (long i = 0; i < pairs / 10; ++i) pair();
  const auto start = std::chrono::steady_clock::now();
  for (long i = 0; i < pairs; ++i) pair();
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count() / pairs;
}
}  // namespace

int main(int argc, char** argv) {
  const std::size_t bytes = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : std::size_t{1} << 20;
  const long pairs = argc > 2 ? std::atol(argv[2]) : 1000000;
  const char* conf = std::getenv("CONF");
  cudaStream_t stream = nullptr;
  cudaSetDevice(0);
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  const cudakit::StreamRef ref(stream, 0);
  CachingAllocator on_cuda(0, std::make_shared<CudaSegmentProvider>(0), std::make_shared<CudaStreamEvents>(0),
                           AllocatorConfig::parse(conf ? conf : ""));
  CachingAllocator on_host(0, std::make_shared<HostSegmentProvider>(std::size_t{8} << 30),
                           std::make_shared<HostStreamEvents>(true), AllocatorConfig::parse(conf ? conf : ""));
  const auto key = reinterpret_cast<StreamKey>(stream);
  std::vector<double> front, cuda, host;
  for (int round = 0; round < 5; ++round) {
    front.push_back(ns_a_pair([&] { deallocate(allocate(bytes, ref)); }, pairs));
    cuda.push_back(ns_a_pair([&] { on_cuda.deallocate(on_cuda.allocate(bytes, key)); }, pairs));
    host.push_back(ns_a_pair([&] { on_host.deallocate(on_host.allocate(bytes, key)); }, pairs));
  }
  const auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  std::printf("%zu B pairs, median of 5: memory::allocate %.1f ns, CachingAllocator on CUDA %.1f ns, on simulated "
              "memory %.1f ns\n", bytes, median(front), median(cuda), median(host));
  return 0;
}
