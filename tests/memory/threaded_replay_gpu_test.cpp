// GPU tier: the recorded threaded server (tests/data/alloc-traces/trace_serve_8t.csv.gz) replayed
// on device memory as it ran: eight threads, each on a stream of its own, a kernel filling every
// block it allocates, every block checked on the device before its free.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include "cudakit/core/error.hpp"
#include "cudakit/core/stream.hpp"
#include "cudakit/memory/alloc_trace.hpp"
#include "cudakit/memory/cuda_segment_provider.hpp"
#include "cudakit/memory/device_allocator.hpp"
#include "support/gpu_test.hpp"
#include "support/kernels.hpp"
#include "support/paths.hpp"

namespace cudakit::memory {
namespace {

TEST(ThreadedReplayGpu, RecordedThreadedServerRunsOnEightThreadsAndStreams) {
  CUDAKIT_REQUIRE_GPU();
  const AllocTrace trace = load_alloc_trace(cudakit::testing::test_data_dir() + "/alloc-traces/trace_serve_8t.csv.gz");
  ASSERT_EQ(trace.num_streams, 8u);
  CachingAllocator allocator(0, std::make_shared<CudaSegmentProvider>(0), std::make_shared<CudaStreamEvents>(0), {});
  std::atomic<unsigned long long> mismatches{0};
  std::vector<std::thread> threads;
  for (std::uint32_t k = 0; k < trace.num_streams; ++k) {
    threads.emplace_back([&, k] {
      CUDAKIT_CHECK_CUDA(cudaSetDevice(0));
      Stream s;
      const auto key = reinterpret_cast<StreamKey>(s.handle());
      const auto stamp = static_cast<std::uint8_t>(k + 1);
      unsigned long long* counter = nullptr;
      CUDAKIT_CHECK_CUDA(cudaMalloc(reinterpret_cast<void**>(&counter), sizeof *counter));
      CUDAKIT_CHECK_CUDA(cudaMemsetAsync(counter, 0, sizeof *counter, s.handle()));
      std::vector<std::pair<void*, std::size_t>> live(trace.num_ids, {nullptr, 0});
      for (const AllocTraceOp& op : trace.ops) {
        if (op.stream != k) continue;
        if (op.is_alloc) {
          void* p = allocator.allocate(op.size, key);
          // The first and last 4 KiB: enough to see another thread's block laid over this one.
          const std::size_t n = std::min<std::size_t>(op.size, 4096);
          cudakit::testing::launch_fill_bytes(s.handle(), p, n, stamp);
          cudakit::testing::launch_fill_bytes(s.handle(), static_cast<char*>(p) + op.size - n, n, stamp);
          live[op.slot] = {p, op.size};
        } else if (auto [p, size] = live[op.slot]; p) {
          const std::size_t n = std::min<std::size_t>(size, 4096);
          cudakit::testing::launch_count_mismatches(s.handle(), p, n, stamp, counter);
          cudakit::testing::launch_count_mismatches(s.handle(), static_cast<char*>(p) + size - n, n, stamp, counter);
          allocator.deallocate(p);
          live[op.slot] = {nullptr, 0};
        }
      }
      for (auto [p, size] : live) {
        if (p) allocator.deallocate(p);
      }
      unsigned long long host = 0;
      CUDAKIT_CHECK_CUDA(cudaMemcpyAsync(&host, counter, sizeof host, cudaMemcpyDeviceToHost, s.handle()));
      s.synchronize();
      CUDAKIT_CHECK_CUDA(cudaFree(counter));
      mismatches += host;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(mismatches.load(), 0u) << "bytes of a live block written by another thread's stream";
  const MemoryStats m = allocator.stats();
  EXPECT_EQ(m.allocation[0].current, 0);
  EXPECT_EQ(m.active[0].current, 0);
  EXPECT_GT(m.num_cross_stream_reuses, 0) << "the threads' streams lent each other memory";
  EXPECT_LE(static_cast<double>(m.reserved_bytes[0].peak), 1.5 * static_cast<double>(m.allocated_bytes[0].peak));
  allocator.empty_cache();
}

}  // namespace
}  // namespace cudakit::memory
