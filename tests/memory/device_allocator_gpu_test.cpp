// GPU tier: the caching allocator on real device memory, with kernels in flight.

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "cudakit/core/error.hpp"
#include "cudakit/core/stream.hpp"
#include "cudakit/memory/cuda_segment_provider.hpp"
#include "cudakit/memory/device_allocator.hpp"
#include "cudakit/memory/mem_pool.hpp"
#include "cudakit/memory/snapshot.hpp"
#include "support/gpu_test.hpp"
#include "support/kernels.hpp"

namespace cudakit::memory {
namespace {

constexpr std::size_t MiB = 1u << 20;

unsigned long long count_mismatches(StreamRef s, const void* p, std::size_t n, std::uint8_t v) {
  unsigned long long* counter = nullptr;
  CUDAKIT_CHECK_CUDA(cudaMallocAsync(reinterpret_cast<void**>(&counter), sizeof *counter, s.handle()));
  CUDAKIT_CHECK_CUDA(cudaMemsetAsync(counter, 0, sizeof *counter, s.handle()));
  cudakit::testing::launch_count_mismatches(s.handle(), p, n, v, counter);
  unsigned long long host = 0;
  CUDAKIT_CHECK_CUDA(cudaMemcpyAsync(&host, counter, sizeof host, cudaMemcpyDeviceToHost, s.handle()));
  CUDAKIT_CHECK_CUDA(cudaFreeAsync(counter, s.handle()));
  s.synchronize();
  return host;
}

class DeviceAllocatorGpu : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    CUDAKIT_REQUIRE_GPU();
    AllocatorConfig c;
    c.expandable_segments = GetParam();
    allocator = std::make_unique<CachingAllocator>(0, std::make_shared<CudaSegmentProvider>(0),
                                                   std::make_shared<CudaStreamEvents>(0), c);
  }
  std::unique_ptr<CachingAllocator> allocator;
};
INSTANTIATE_TEST_SUITE_P(Expandable, DeviceAllocatorGpu, ::testing::Bool());

TEST_P(DeviceAllocatorGpu, EveryAllocatedByteIsWritableAndDisjoint) {
  Stream s;
  std::mt19937 rng(7);
  struct Live { void* p; std::size_t n; std::uint8_t v; };
  std::vector<Live> live;
  for (int i = 0; i < 300; ++i) {
    const std::size_t n = 1 + rng() % (i % 10 == 0 ? 40 * MiB : 256 * 1024);
    void* p = allocator->allocate(n, reinterpret_cast<StreamKey>(s.handle()));
    const auto v = static_cast<std::uint8_t>(i);
    cudakit::testing::launch_fill_bytes(s.handle(), p, n, v);
    live.push_back({p, n, v});
    if (rng() % 3 == 0) {  // free a random earlier block: its memory is reused by later ones
      const std::size_t k = rng() % live.size();
      allocator->deallocate(live[k].p);
      live.erase(live.begin() + static_cast<long>(k));
    }
  }
  // Had two live blocks overlapped, the later fill would show in the earlier one.
  for (const Live& l : live) {
    EXPECT_EQ(count_mismatches(s, l.p, l.n, l.v), 0u);
    allocator->deallocate(l.p);
  }
  allocator->empty_cache();
  EXPECT_EQ(allocator->stats().reserved_bytes[0].current, 0);
}

// A graph's private pool has no memory when its capture begins: its first allocation makes a
// segment during a global-mode capture (torch's default mode), classic (cudaMalloc) or
// expandable (the VMM calls). Neither may invalidate the capture, and the graph's replay writes
// the memory it was given.
TEST_P(DeviceAllocatorGpu, ASegmentMadeDuringAGlobalCaptureLeavesItIntact) {
  Stream s;
  const auto key = reinterpret_cast<StreamKey>(s.handle());
  const PoolId pool = CachingAllocator::new_pool_id();
  allocator->create_pool(pool);
  ASSERT_EQ(cudaStreamBeginCapture(s.handle(), cudaStreamCaptureModeGlobal), cudaSuccess);
  void* p = allocator->allocate(3 * MiB, key, pool);
  cudakit::testing::launch_fill_bytes(s.handle(), p, 3 * MiB, 0x5a);
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  ASSERT_EQ(cudaStreamIsCapturing(s.handle(), &status), cudaSuccess);
  EXPECT_EQ(status, cudaStreamCaptureStatusActive) << "making the segment invalidated the capture";
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamEndCapture(s.handle(), &graph), cudaSuccess);
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, s.handle()), cudaSuccess);
  EXPECT_EQ(count_mismatches(s, p, 3 * MiB, 0x5a), 0u);
  ASSERT_EQ(cudaGraphExecDestroy(exec), cudaSuccess);
  ASSERT_EQ(cudaGraphDestroy(graph), cudaSuccess);
  allocator->deallocate(p);
  allocator->release_pool(pool);
  EXPECT_FALSE(allocator->has_pool(pool));
}

TEST_P(DeviceAllocatorGpu, CrossStreamReuseWaitsForKernelsInFlight) {
  Stream producer, consumer;
  const auto p_key = reinterpret_cast<StreamKey>(producer.handle());
  void* buffer = allocator->allocate(8 * MiB, p_key);
  cudakit::testing::launch_fill_bytes(producer.handle(), buffer, 8 * MiB, 1);
  consumer.wait_stream(producer);
  // The consumer reads the buffer after a long kernel: the producer must not get it back early.
  cudakit::testing::launch_spin(consumer.handle(), 100'000'000);
  unsigned long long* mismatches = nullptr;
  CUDAKIT_CHECK_CUDA(cudaMalloc(reinterpret_cast<void**>(&mismatches), sizeof *mismatches));
  CUDAKIT_CHECK_CUDA(cudaMemset(mismatches, 0, sizeof *mismatches));
  cudakit::testing::launch_count_mismatches(consumer.handle(), buffer, 8 * MiB, 1, mismatches);
  allocator->record_stream(buffer, reinterpret_cast<StreamKey>(consumer.handle()));
  allocator->deallocate(buffer);
  void* next = allocator->allocate(8 * MiB, p_key);
  EXPECT_NE(next, buffer) << "reused while the consumer's kernels were in flight";
  cudakit::testing::launch_fill_bytes(producer.handle(), next, 8 * MiB, 2);
  consumer.synchronize();
  unsigned long long host = 1;
  CUDAKIT_CHECK_CUDA(cudaMemcpy(&host, mismatches, sizeof host, cudaMemcpyDeviceToHost));
  EXPECT_EQ(host, 0u) << "the consumer saw data overwritten before it read it";
  allocator->process_events();
  void* reused = allocator->allocate(8 * MiB, p_key);
  EXPECT_EQ(reused, buffer);  // once the events completed, the block is free again
  allocator->deallocate(next);
  allocator->deallocate(reused);
  CUDAKIT_CHECK_CUDA(cudaFree(mismatches));
}

TEST_P(DeviceAllocatorGpu, FractionLimitGivesAClearOomAndTheProgramGoesOn) {
  const std::size_t total = get_device_properties(0).total_memory;
  allocator->set_memory_fraction(static_cast<double>(512 * MiB) / static_cast<double>(total));
  Stream s;
  const auto key = reinterpret_cast<StreamKey>(s.handle());
  void* a = allocator->allocate(300 * MiB, key);
  // An observer dumps the snapshot at the failure, as a server would to a file.
  allocator->record_history(true, 1000);
  OutOfMemoryInfo seen;
  std::string dumped;
  (void)allocator->attach_oom_observer([&](const OutOfMemoryInfo& info) {
    seen = info;
    seen.report = {};
    dumped = snapshot_to_json(allocator->snapshot());
  });
  try {
    (void)allocator->allocate(300 * MiB, key);
    FAIL() << "no OOM under the fraction limit";
  } catch (const OutOfMemoryError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("CUDA out of memory. Tried to allocate 300.00 MiB. GPU 0 has a total capacity of"), std::string::npos) << what;
    EXPECT_NE(what.find("per-process memory fraction"), std::string::npos) << what;
    EXPECT_NE(what.find("300.00 MiB allocated"), std::string::npos) << what;
  }
  allocator->record_history(false);
  EXPECT_EQ(seen.requested_bytes, 300 * MiB);
  EXPECT_EQ(seen.allocated_bytes, 300 * MiB);
  EXPECT_EQ(seen.device_total_bytes, total);
  EXPECT_GT(seen.device_free_bytes, 0u);
  EXPECT_LT(seen.device_free_bytes, total);
  const MemorySnapshot at_failure = snapshot_from_json(dumped);
  ASSERT_FALSE(at_failure.trace.empty());
  EXPECT_EQ(at_failure.trace.back().action, TraceEntry::Action::oom);
  EXPECT_EQ(at_failure.trace.back().size, 300 * MiB);
  allocator->deallocate(a);
  void* b = allocator->allocate(400 * MiB, key);  // fits once the first is gone
  cudakit::testing::launch_fill_bytes(s.handle(), b, 400 * MiB, 9);
  EXPECT_EQ(count_mismatches(s, b, 400 * MiB, 9), 0u);
  allocator->deallocate(b);
  EXPECT_EQ(allocator->stats().num_ooms, 1);
}

// Two streams that peak in turn: the device-wide peaks are those of the device, not the sum of
// the streams' (See Note [Device-wide peaks]).
TEST_P(DeviceAllocatorGpu, StreamsPeakingInTurnReportTheDevicePeak) {
  Stream first, second;
  std::int64_t expected_reserved = 0;
  for (Stream* s : {&first, &second}) {
    const auto key = reinterpret_cast<StreamKey>(s->handle());
    void* p = allocator->allocate(256 * MiB, key);
    cudakit::testing::launch_fill_bytes(s->handle(), p, 256 * MiB, 3);
    EXPECT_EQ(count_mismatches(*s, p, 256 * MiB, 3), 0u);
    expected_reserved = std::max(expected_reserved, allocator->stats().reserved_bytes[0].current);
    allocator->deallocate(p);
    allocator->empty_cache();
  }
  const MemoryStats m = allocator->stats();
  EXPECT_EQ(m.allocated_bytes[0].peak, static_cast<std::int64_t>(256 * MiB));
  EXPECT_EQ(m.allocation[0].peak, 1);
  EXPECT_EQ(m.active_bytes[0].peak, static_cast<std::int64_t>(256 * MiB));
  EXPECT_EQ(m.reserved_bytes[0].peak, expected_reserved);
  EXPECT_EQ(m.reserved_bytes[0].current, 0);
}

TEST(DeviceAllocatorFacadeGpu, StatsPoolsAndSnapshot) {
  CUDAKIT_REQUIRE_GPU();
  Stream s;
  empty_cache();
  reset_peak_memory_stats();
  const std::size_t before = memory_allocated();
  void* p = allocate(10 * MiB, s);
  EXPECT_EQ(memory_allocated(), before + 10 * MiB);
  EXPECT_GE(memory_reserved(), memory_allocated());
  EXPECT_GE(max_memory_allocated(), before + 10 * MiB);
  {
    MemPool pool;
    EXPECT_EQ(pool.use_count(), 1);
    void* in_pool = nullptr;
    {
      use_mem_pool scope(pool);
      EXPECT_EQ(pool.use_count(), 2);
      in_pool = allocate(3 * MiB, s);
    }
    EXPECT_EQ(pool.allocated_bytes(), 3 * MiB);
    // The pool's snapshot holds its segments only: the pool's block, not the default pool's.
    const MemorySnapshot pool_snap = pool.snapshot();
    ASSERT_FALSE(pool_snap.segments.empty());
    bool has_in_pool = false, has_default = false;
    for (const SegmentSnapshot& seg : pool_snap.segments) {
      EXPECT_EQ(seg.pool, pool.id());
      for (const BlockSnapshot& b : seg.blocks) {
        has_in_pool |= b.address == reinterpret_cast<std::uintptr_t>(in_pool);
        has_default |= b.address == reinterpret_cast<std::uintptr_t>(p);
      }
    }
    EXPECT_TRUE(has_in_pool);
    EXPECT_FALSE(has_default);
    EXPECT_EQ(memory_allocated(), before + 13 * MiB);
    deallocate(in_pool);
    EXPECT_GT(pool.reserved_bytes(), 0u);
  }
  EXPECT_EQ(get_per_process_memory_fraction(), 1.0);
  set_per_process_memory_fraction(0.75);
  EXPECT_EQ(get_per_process_memory_fraction(), 0.75);
  EXPECT_THROW(set_per_process_memory_fraction(1.5), InvalidArgumentError);
  EXPECT_EQ(get_per_process_memory_fraction(), 0.75);  // the bad value changed nothing
  set_per_process_memory_fraction(1.0);
  record_memory_history(true, 1000);
  void* q = allocate(MiB, s);
  const MemorySnapshot snap = memory_snapshot();
  record_memory_history(false);
  ASSERT_FALSE(snap.trace.empty());
  EXPECT_EQ(snap.trace.back().action, TraceEntry::Action::alloc);
  ASSERT_TRUE(snap.trace.back().frames);
  EXPECT_FALSE(snap.trace.back().frames->empty());
  deallocate(q);
  deallocate(p);
  EXPECT_THROW(deallocate(p), InvalidArgumentError);
  EXPECT_NE(memory_summary().find("Reserved memory"), std::string::npos);
}

void* user_alloc(std::size_t size, int, cudaStream_t) {
  void* p = nullptr;
  return cudaMalloc(&p, size) == cudaSuccess ? p : nullptr;
}
int g_user_frees = 0;
void user_free(void* p, std::size_t, int, cudaStream_t) {
  ++g_user_frees;
  cudaFree(p);
}

TEST(DeviceAllocatorFacadeGpu, PluggablePoolUsesTheUserFunctions) {
  CUDAKIT_REQUIRE_GPU();
  Stream s;
  g_user_frees = 0;
  {
    MemPool pool(user_alloc, user_free);
    use_mem_pool scope(pool);
    void* p = allocate(5 * MiB, s);
    cudakit::testing::launch_fill_bytes(s.handle(), p, 5 * MiB, 3);
    EXPECT_EQ(count_mismatches(s, p, 5 * MiB, 3), 0u);
    deallocate(p);
  }
  EXPECT_GE(g_user_frees, 1);  // the pool returned its segment through the user's free
}

}  // namespace
}  // namespace cudakit::memory
