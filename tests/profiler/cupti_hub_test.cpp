// What the CUPTI hub and the record conversions do without a GPU: the hub must load (or report
// why not) without throwing, and its clock and names must work either way; records CUPTI
// would deliver are converted field by field; listener snapshots never call a removed listener.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <cstring>
#include <thread>

#include "cudakit/core/error.hpp"
#include "cudakit/profiler/cupti_hub.hpp"
#include "cudakit/profiler/profiler.hpp"
#include "cudakit/profiler/record_function.hpp"
#include "profiler/detail/activity_records.hpp"
#include "core/detail/listener_set.hpp"

namespace cudakit::profiler {
namespace {

TEST(ProfilerHubHost, ReportsAvailabilityWithoutThrowing) {
  CuptiHub& hub = CuptiHub::instance();
  EXPECT_EQ(&hub, &CuptiHub::instance());
  // Without a driver CUPTI may or may not subscribe; either way the answer is explained.
  if (!hub.available()) {
    EXPECT_FALSE(hub.reason().empty());
    EXPECT_THROW((void)hub.add_activity_listener({CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL},
                                                 [](const CUpti_Activity&) {}),
                 StateError);
    EXPECT_THROW((void)hub.add_callback(CUPTI_CB_DOMAIN_RUNTIME_API, {}), StateError);
    EXPECT_THROW(Profiler{}, StateError);
  }
  hub.flush();                  // harmless with nothing enabled
  hub.remove_callback(123456);  // unknown ids are ignored
  hub.remove_activity_listener(123456);
}

TEST(ProfilerHubHost, ClockIsMonotonicNanoseconds) {
  CuptiHub& hub = CuptiHub::instance();
  const std::uint64_t a = hub.timestamp();
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  const std::uint64_t b = hub.timestamp();
  EXPECT_GE(b - a, 2'000'000u);
  EXPECT_LT(b - a, 2'000'000'000u);
}

TEST(ProfilerHubHost, RejectsUnknownActivityKinds) {
  CuptiHub& hub = CuptiHub::instance();
  if (!hub.available()) GTEST_SKIP() << hub.reason();
  EXPECT_THROW((void)hub.add_activity_listener({static_cast<CUpti_ActivityKind>(100000)},
                                               [](const CUpti_Activity&) {}),
               InvalidArgumentError);
}

TEST(ProfilerHubHost, RecordFunctionWithoutProfilerRecordsNothing) {
  auto range = record_function("idle");  // must not touch CUPTI or throw
  SUCCEED();
}

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

TEST(ProfilerListenerSet, RemoveWaitsForInFlightDispatch) {
  cudakit::detail::ListenerSet<std::function<void()>> set;
  std::atomic<bool> entered{false}, release{false}, removed_returned{false};
  std::atomic<int> calls_after_remove{0};
  const int id = set.add([&] {
    entered = true;
    while (!release) std::this_thread::yield();
    if (removed_returned) ++calls_after_remove;
  });
  std::thread dispatcher([&] { set.for_each([](const auto& fn) { fn(); }); });
  while (!entered) std::this_thread::yield();
  std::thread remover([&] {
    EXPECT_NE(set.remove(id), nullptr);
    removed_returned = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(removed_returned);  // still inside the listener
  release = true;
  dispatcher.join();
  remover.join();
  EXPECT_TRUE(removed_returned);
  EXPECT_EQ(calls_after_remove, 0);
  EXPECT_TRUE(set.empty());
  EXPECT_EQ(set.remove(id), nullptr);
}

}  // namespace
}  // namespace cudakit::profiler
