// Records CUPTI would deliver are converted field by field.

#include <gtest/gtest.h>

#include <cstring>

#include "profiler/detail/activity_records.hpp"

namespace cudakit::profiler {
namespace {

TEST(ProfilerActivityRecords, KernelRecordKeepsEveryField) {
  CUpti_ActivityKernel10 r;
  std::memset(&r, 0, sizeof r);
  r.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  r.start = 1000;
  r.end = 2500;
  r.deviceId = 1;
  r.streamId = 13;
  r.correlationId = 77;
  r.gridX = 4, r.gridY = 5, r.gridZ = 6;
  r.blockX = 128, r.blockY = 2, r.blockZ = 1;
  r.registersPerThread = 40;
  r.staticSharedMemory = 1024;
  r.dynamicSharedMemory = 4096;
  r.graphId = 9;
  r.graphNodeId = (std::uint64_t{9} << 32) | 3;
  const KernelEvent e = detail::kernel_event(r, detail::demangle("_Z4spinPfi"));
  EXPECT_EQ(e.name, "spin(float*, int)");
  EXPECT_EQ(e.start_ns, 1000u);
  EXPECT_EQ(e.end_ns, 2500u);
  EXPECT_EQ(e.device, 1u);
  EXPECT_EQ(e.stream, 13u);
  EXPECT_EQ(e.correlation, 77u);
  EXPECT_EQ(e.grid[2], 6);
  EXPECT_EQ(e.block[0], 128);
  EXPECT_EQ(e.registers_per_thread, 40u);
  EXPECT_EQ(e.static_shared_memory + e.dynamic_shared_memory, 5120u);
  EXPECT_EQ(e.graph_id, 9u);
  EXPECT_EQ(e.graph_node_id, r.graphNodeId);
  EXPECT_EQ(detail::demangle("not_mangled"), "not_mangled");
  EXPECT_EQ(detail::demangle(nullptr), "<unnamed>");
}

TEST(ProfilerActivityRecords, MemoryRecordsNameKindAndBytes) {
  CUpti_ActivityMemcpy6 copy;
  std::memset(&copy, 0, sizeof copy);
  copy.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  copy.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
  copy.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  copy.bytes = 1 << 20;
  const MemoryOpEvent c = detail::memcpy_event(copy);
  EXPECT_EQ(c.name, "Memcpy HtoD (Pinned -> Device)");
  EXPECT_EQ(c.copy_kind, "HtoD");
  EXPECT_EQ(c.bytes, 1u << 20);
  EXPECT_EQ(c.type, MemoryOpEvent::Type::memcpy);

  CUpti_ActivityMemset4 fill;
  std::memset(&fill, 0, sizeof fill);
  fill.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  fill.bytes = 4096;
  const MemoryOpEvent f = detail::memset_event(fill);
  EXPECT_EQ(f.name, "Memset (Device)");
  EXPECT_EQ(f.bytes, 4096u);
  EXPECT_EQ(f.type, MemoryOpEvent::Type::memset);

  CUpti_ActivitySynchronization2 sync;
  std::memset(&sync, 0, sizeof sync);
  sync.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
  sync.correlationId = 5;
  EXPECT_EQ(detail::sync_event(sync).name, "Stream Sync");
}

TEST(ProfilerActivityRecords, ApiNamesLoseTheVersionSuffix) {
  // cuptiGetCallbackName's names, as seen on the H200.
  EXPECT_EQ(detail::api_name("cudaLaunchKernel_v7000"), "cudaLaunchKernel");
  EXPECT_EQ(detail::api_name("cudaGraphLaunch_v10000"), "cudaGraphLaunch");
  EXPECT_EQ(detail::api_name("cudaMemcpyAsync_ptsz_v7000"), "cudaMemcpyAsync_ptsz");
  EXPECT_EQ(detail::api_name("cudaMalloc"), "cudaMalloc");
  EXPECT_EQ(detail::api_name("odd_v"), "odd_v");
  EXPECT_EQ(detail::api_name("my_value"), "my_value");
}

}  // namespace
}  // namespace cudakit::profiler
