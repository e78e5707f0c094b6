// GPU tier: the caching allocator's run-time API on a device — a free deferred for a capturing
// stream that the program then destroys, settings changed at run time, pool options, history
// modes, snapshots of every device and the nested statistics.

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "cudakit/core/error.hpp"
#include "cudakit/core/stream.hpp"
#include "cudakit/memory/cuda_segment_provider.hpp"
#include "cudakit/memory/device_allocator.hpp"
#include "cudakit/memory/mem_pool.hpp"
#include "cudakit/memory/snapshot.hpp"
#include "support/gpu_test.hpp"

namespace cudakit::memory {
namespace {

constexpr std::size_t MiB = 1u << 20;

StreamKey key(StreamRef s) { return reinterpret_cast<StreamKey>(s.handle()); }

std::unique_ptr<CachingAllocator> own_allocator(AllocatorConfig config = {}) {
  return std::make_unique<CachingAllocator>(0, std::make_shared<CudaSegmentProvider>(0),
                                            std::make_shared<CudaStreamEvents>(0), config);
}

TEST(AllocatorRuntimeGpu, FreeDeferredForACaptureIsReleasedAfterTheStreamIsDestroyed) {
  CUDAKIT_REQUIRE_GPU();
  for (bool expandable : {false, true}) {
    SCOPED_TRACE(expandable);
    AllocatorConfig config;
    config.expandable_segments = expandable;
    auto allocator = own_allocator(config);
    Stream home(0);
    auto side = std::make_unique<Stream>(0);
    void* p = allocator->allocate(MiB, key(home));
    allocator->record_stream(p, key(*side));
    ASSERT_EQ(cudaStreamBeginCapture(side->handle(), cudaStreamCaptureModeThreadLocal), cudaSuccess);
    allocator->deallocate(p);  // deferred: no event may be recorded on the capturing stream
    cudaGraph_t graph = nullptr;
    ASSERT_EQ(cudaStreamEndCapture(side->handle(), &graph), cudaSuccess);
    ASSERT_EQ(cudaGraphDestroy(graph), cudaSuccess);
    EXPECT_GT(allocator->stats().active_bytes[0].current, 0);
    side.reset();  // destroyed before the allocator looks at the free again
    allocator->empty_cache();
    EXPECT_EQ(allocator->stats().active_bytes[0].current, 0);
    EXPECT_EQ(allocator->stats().reserved_bytes[0].current, 0) << "the deferred free was released";
    // And the allocator goes on serving.
    void* q = allocator->allocate(MiB, key(home));
    allocator->deallocate(q);
    home.synchronize();
  }
}

TEST(AllocatorRuntimeGpu, SettingsChangeWhileTheAllocatorRuns) {
  CUDAKIT_REQUIRE_GPU();
  auto allocator = own_allocator();
  Stream s(0);
  void* a = allocator->allocate(3 * MiB, key(s));
  allocator->set_allocator_settings("expandable_segments:False,large_segment_size_mb:32");
  void* b = allocator->allocate(2 * MiB, key(s));
  bool arena = false, segment_32 = false;
  for (const auto& seg : allocator->snapshot(false).segments) {
    arena |= seg.is_expandable;
    segment_32 |= !seg.is_expandable && seg.total_size == 32 * MiB;
  }
  EXPECT_TRUE(arena) << "the arena stays";
  EXPECT_TRUE(segment_32) << "new memory is a 32 MiB segment";
  const std::string before = allocator->config().to_string();
  EXPECT_THROW(allocator->set_allocator_settings("pinned_use_cuda_host_register:True"), InvalidArgumentError);
  EXPECT_THROW(allocator->set_allocator_settings("max_split_size_mb:64,bogus:1"), InvalidArgumentError);
  EXPECT_EQ(allocator->config().to_string(), before);
  allocator->deallocate(a);
  allocator->deallocate(b);
  allocator->empty_cache();
  EXPECT_EQ(allocator->stats().reserved_bytes[0].current, 0);
}

TEST(AllocatorRuntimeGpu, ProcessWideSettingsRefuseBadInputOnEveryDevice) {
  CUDAKIT_REQUIRE_GPU();
  const std::string before = device_allocator().config().to_string();
  EXPECT_THROW(set_allocator_settings("max_non_split_rounding_mb:32,nope:1"), InvalidArgumentError);
  EXPECT_THROW(set_allocator_settings("pinned_num_register_threads:2"), InvalidArgumentError);
  EXPECT_EQ(device_allocator().config().to_string(), before);
  set_allocator_settings("max_non_split_rounding_mb:24");
  EXPECT_EQ(device_allocator().config().max_non_split_rounding, 24 * MiB);
  set_allocator_settings("max_non_split_rounding_mb:20");  // back to the default for later tests
  EXPECT_EQ(device_allocator().config().max_non_split_rounding, 20 * MiB);
}

TEST(AllocatorRuntimeGpu, NoSplitMemPoolGivesWholeSegments) {
  CUDAKIT_REQUIRE_GPU();
  Stream s;
  MemPool pool({.no_split = true});
  EXPECT_TRUE(pool.options().no_split);
  use_mem_pool scope(pool);
  void* p = allocate(1000, s);
  EXPECT_EQ(device_allocator().allocation_size(p), 2 * MiB);
  deallocate(p);
}

TEST(AllocatorRuntimeGpu, HistoryModesSnapshotsOfEveryDeviceAndNestedStatistics) {
  CUDAKIT_REQUIRE_GPU();
  Stream s;
  record_memory_history({.context = MemoryHistoryOptions::Context::alloc, .max_entries = 1000});
  void* p = allocate(MiB, s);
  const std::vector<MemorySnapshot> with = memory_snapshot_all(/*include_traces=*/true);
  const std::vector<MemorySnapshot> without = memory_snapshot_all();
  record_memory_history({.enabled = MemoryHistoryOptions::Enabled::none});
  ASSERT_FALSE(with.empty());
  ASSERT_EQ(with.size(), without.size());
  const int device = s.device();
  bool found = false;
  for (std::size_t i = 0; i < with.size(); ++i) {
    EXPECT_TRUE(without[i].trace.empty());
    if (with[i].device != device) continue;
    found = true;
    ASSERT_FALSE(with[i].trace.empty());
    EXPECT_EQ(with[i].trace.back().action, TraceEntry::Action::alloc);
    ASSERT_TRUE(with[i].trace.back().frames);
    EXPECT_FALSE(with[i].trace.back().frames->empty());
    EXPECT_EQ(with[i].segments.size(), without[i].segments.size());
  }
  EXPECT_TRUE(found);
  EXPECT_THROW(record_memory_history({.skip_actions = {"alloc", "malloc"}}), InvalidArgumentError);
  const NestedStats nested = memory_stats_as_nested_dict();
  EXPECT_EQ(nested.flatten(), memory_stats().to_map());
  EXPECT_GE(nested.at("allocated_bytes.all.current").value(), static_cast<std::int64_t>(MiB));
  deallocate(p);
}

}  // namespace
}  // namespace cudakit::memory
