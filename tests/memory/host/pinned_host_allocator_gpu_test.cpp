// GPU tier of the pinned host allocator: real cudaHostAlloc memory, real events, copies in flight.
#include "cudakit/memory/host/pinned_host_allocator.hpp"

#include <gtest/gtest.h>

#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>

#include "cudakit/core/current_stream.hpp"
#include "cudakit/core/device_guard.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/core/event.hpp"
#include "cudakit/core/stream.hpp"
#include "cudakit/memory/host/pinned_event_source.hpp"
#include "cudakit/memory/host/pinned_memory_provider.hpp"
#include "support/gpu_test.hpp"
#include "support/kernels.hpp"

namespace {

using cudakit::Event;
using cudakit::EventFlags;
using cudakit::Stream;
using cudakit::memory::PinnedHostAllocator;
using cudakit::memory::PinnedHostStats;

// Plain cudaMalloc memory, so that these tests do not depend on the device allocator.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t bytes, int device = 0) : device_(device) {
    cudakit::DeviceGuard guard(device);
    CUDAKIT_CHECK_CUDA(cudaMalloc(&ptr_, bytes));
  }
  ~DeviceBuffer() {
    cudakit::DeviceGuard guard(device_);
    CUDAKIT_WARN_CUDA(cudaFree(ptr_));
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  [[nodiscard]] void* get() const noexcept { return ptr_; }

 private:
  void* ptr_ = nullptr;
  int device_;
};

// Bytes of [ptr, ptr + bytes) on the device that differ from `value`; synchronizes `stream`.
unsigned long long device_mismatches(const Stream& stream, const void* ptr, std::size_t bytes,
                                     std::uint8_t value) {
  DeviceBuffer counter(sizeof(unsigned long long), stream.device());
  CUDAKIT_CHECK_CUDA(cudaMemsetAsync(counter.get(), 0, sizeof(unsigned long long), stream.handle()));
  cudakit::testing::launch_count_mismatches(stream.handle(), ptr, bytes, value,
                                            static_cast<unsigned long long*>(counter.get()));
  unsigned long long result = 0;
  CUDAKIT_CHECK_CUDA(cudaMemcpyAsync(&result, counter.get(), sizeof(result),
                                     cudaMemcpyDeviceToHost, stream.handle()));
  stream.synchronize();
  return result;
}

constexpr std::uint64_t kSpinNs = 300'000'000;  // keeps a stream busy far longer than the checks

// A forked child sees no registered block: the parent's pinned pages are neither copied nor
// shared with it (the child checks with mincore, which fails with ENOMEM on unmapped memory,
// and exits without touching CUDA).
TEST(PinnedHostAllocatorGpu, RegisteredBlocksAreNotInheritedByForkedChildren) {
  CUDAKIT_REQUIRE_GPU();
  auto provider = cudakit::memory::make_registered_pinned_memory_provider(2);
  constexpr std::size_t kBytes = 8u << 20;
  void* block = provider->allocate(kBytes);
  ASSERT_NE(block, nullptr);
  std::memset(block, 7, kBytes);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    unsigned char resident = 0;
    const bool unmapped = ::mincore(block, 4096, &resident) != 0 && errno == ENOMEM;
    ::_exit(unmapped ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the child could see the parent's registered block";
  EXPECT_EQ(static_cast<unsigned char*>(block)[kBytes - 1], 7);  // the parent's block is intact
  provider->free(block);
}

// Registered memory (pinned_use_cuda_host_register): page-locked host memory that asynchronous
// copies use both ways, through the caching allocator with record_stream as any pinned block.
TEST(PinnedHostAllocatorGpu, RegisteredMemoryCarriesCopiesBothWays) {
  CUDAKIT_REQUIRE_GPU();
  PinnedHostAllocator allocator(cudakit::memory::make_registered_pinned_memory_provider(8),
                                cudakit::memory::make_cuda_pinned_event_source());
  constexpr std::size_t kBytes = (64u << 20) + 4096;  // a 128 MiB size class, 8 threads fault it
  auto* source = static_cast<std::uint8_t*>(allocator.allocate(kBytes));
  auto* back = static_cast<std::uint8_t*>(allocator.allocate(kBytes));
  for (void* p : {static_cast<void*>(source), static_cast<void*>(back)}) {
    cudaPointerAttributes attributes{};
    CUDAKIT_CHECK_CUDA(cudaPointerGetAttributes(&attributes, p));
    EXPECT_EQ(attributes.type, cudaMemoryTypeHost);
    EXPECT_NE(attributes.devicePointer, nullptr);
  }
  EXPECT_EQ(allocator.stats().reserved_bytes.current, 2 * PinnedHostAllocator::size_class(kBytes));
  for (std::size_t i = 0; i < kBytes; ++i) source[i] = static_cast<std::uint8_t>(i * 7 + (i >> 20));
  Stream stream;
  DeviceBuffer device(kBytes);
  CUDAKIT_CHECK_CUDA(cudaMemcpyAsync(device.get(), source, kBytes, cudaMemcpyHostToDevice, stream.handle()));
  CUDAKIT_CHECK_CUDA(cudaMemcpyAsync(back, device.get(), kBytes, cudaMemcpyDeviceToHost, stream.handle()));
  allocator.record_stream(source, stream);
  allocator.record_stream(back, stream);
  stream.synchronize();
  EXPECT_EQ(std::memcmp(source, back, kBytes), 0);
  allocator.deallocate(source);
  allocator.deallocate(back);
  allocator.empty_cache();
  EXPECT_EQ(allocator.stats().reserved_bytes.current, 0u);
  // Memory that was never registered here is not unregistered (and not unmapped) by free().
  auto provider = cudakit::memory::make_registered_pinned_memory_provider(1);
  int local = 0;
  provider->free(&local);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

TEST(PinnedHostAllocatorGpu, MemoryIsPageLockedHostMemory) {
  CUDAKIT_REQUIRE_GPU();
  PinnedHostAllocator allocator;
  void* p = allocator.allocate(3000);
  cudaPointerAttributes attributes{};
  CUDAKIT_CHECK_CUDA(cudaPointerGetAttributes(&attributes, p));
  EXPECT_EQ(attributes.type, cudaMemoryTypeHost);
  EXPECT_NE(attributes.devicePointer, nullptr);  // mapped into the device's address space
  std::memset(p, 1, PinnedHostAllocator::size_class(3000));
  allocator.deallocate(p);
  EXPECT_EQ(allocator.stats().reserved_bytes.current, 4096u);
}

TEST(PinnedHostAllocatorGpu, AsyncCopiesThroughPinnedMemoryGiveCorrectData) {
  CUDAKIT_REQUIRE_GPU();
  constexpr std::size_t kBytes = 8u << 20;
  PinnedHostAllocator allocator;
  Stream stream;
  DeviceBuffer device(kBytes);
  auto* up = static_cast<std::uint8_t*>(allocator.allocate(kBytes));
  std::memset(up, 0x5a, kBytes);
  CUDAKIT_CHECK_CUDA(
      cudaMemcpyAsync(device.get(), up, kBytes, cudaMemcpyHostToDevice, stream.handle()));
  allocator.record_stream(up, stream);
  allocator.deallocate(up);
  EXPECT_EQ(device_mismatches(stream, device.get(), kBytes, 0x5a), 0u);

  cudakit::testing::launch_fill_bytes(stream.handle(), device.get(), kBytes, 0xc3);
  auto* down = static_cast<std::uint8_t*>(allocator.allocate(kBytes));
  CUDAKIT_CHECK_CUDA(
      cudaMemcpyAsync(down, device.get(), kBytes, cudaMemcpyDeviceToHost, stream.handle()));
  allocator.record_stream(down, stream);
  stream.synchronize();
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < kBytes; ++i) wrong += down[i] != 0xc3;
  EXPECT_EQ(wrong, 0u);
  allocator.deallocate(down);
}

TEST(PinnedHostAllocatorGpu, BlockIsNotReusedWhileACopyFromItIsInFlight) {
  CUDAKIT_REQUIRE_GPU();
  constexpr std::size_t kBytes = 4u << 20;
  PinnedHostAllocator allocator;
  Stream stream;
  DeviceBuffer device(kBytes);
  auto* source = static_cast<std::uint8_t*>(allocator.allocate(kBytes));
  std::memset(source, 0x77, kBytes);
  // The spin holds the copy back, so the copy is certainly still to run when we deallocate.
  cudakit::testing::launch_spin(stream.handle(), kSpinNs);
  CUDAKIT_CHECK_CUDA(
      cudaMemcpyAsync(device.get(), source, kBytes, cudaMemcpyHostToDevice, stream.handle()));
  allocator.record_stream(source, stream);
  allocator.deallocate(source);
  ASSERT_FALSE(stream.query()) << "the spin kernel finished before the checks: raise kSpinNs";

  PinnedHostStats stats = allocator.stats();
  EXPECT_EQ(stats.pending_blocks, 1u);
  EXPECT_EQ(stats.num_events_recorded, 1u);
  auto* other = static_cast<std::uint8_t*>(allocator.allocate(kBytes));
  EXPECT_NE(other, source) << "a block was reused while a copy from it was pending";
  // Writing the new block must not disturb the pending copy.
  std::memset(other, 0x11, kBytes);
  EXPECT_EQ(allocator.process_events(), 0u);
  ASSERT_FALSE(stream.query());

  stream.synchronize();
  auto* again = static_cast<std::uint8_t*>(allocator.allocate(kBytes));
  EXPECT_EQ(again, source) << "the block was not reused once its stream had finished";
  stats = allocator.stats();
  EXPECT_EQ(stats.pending_blocks, 0u);
  EXPECT_EQ(stats.num_cache_hits, 1u);
  EXPECT_EQ(stats.num_host_allocs, 2u);
  std::memset(again, 0x22, kBytes);
  EXPECT_EQ(device_mismatches(stream, device.get(), kBytes, 0x77), 0u);
  allocator.deallocate(other);
  allocator.deallocate(again);
}

TEST(PinnedHostAllocatorGpu, BlockUsedOnTwoStreamsWaitsForBoth) {
  CUDAKIT_REQUIRE_GPU();
  constexpr std::size_t kBytes = 1u << 20;
  PinnedHostAllocator allocator;
  Stream fast, slow;
  DeviceBuffer a(kBytes), b(kBytes);
  void* source = allocator.allocate(kBytes);
  std::memset(source, 0x3c, kBytes);
  CUDAKIT_CHECK_CUDA(cudaMemcpyAsync(a.get(), source, kBytes, cudaMemcpyHostToDevice, fast.handle()));
  cudakit::testing::launch_spin(slow.handle(), kSpinNs);
  CUDAKIT_CHECK_CUDA(cudaMemcpyAsync(b.get(), source, kBytes, cudaMemcpyHostToDevice, slow.handle()));
  allocator.record_stream(source, fast);
  allocator.record_stream(source, slow);
  allocator.deallocate(source);
  fast.synchronize();
  ASSERT_FALSE(slow.query());
  void* other = allocator.allocate(kBytes);
  EXPECT_NE(other, source);
  slow.synchronize();
  void* again = allocator.allocate(kBytes);
  EXPECT_EQ(again, source);
  EXPECT_EQ(device_mismatches(fast, a.get(), kBytes, 0x3c), 0u);
  EXPECT_EQ(device_mismatches(slow, b.get(), kBytes, 0x3c), 0u);
  EXPECT_EQ(allocator.stats().num_events_created, 2u);
  allocator.deallocate(other);
  allocator.deallocate(again);
}

TEST(PinnedHostAllocatorGpu, RecordingOnTheLegacyDefaultStreamWorks) {
  CUDAKIT_REQUIRE_GPU();
  PinnedHostAllocator allocator;
  const cudakit::StreamRef legacy = cudakit::default_stream();
  void* p = allocator.allocate(1024);
  cudakit::testing::launch_spin(legacy.handle(), kSpinNs);
  allocator.record_stream(p, legacy);
  allocator.deallocate(p);
  EXPECT_NE(allocator.allocate(1024), p);
  legacy.synchronize();
  EXPECT_EQ(allocator.process_events(), 1u);
  EXPECT_EQ(allocator.allocate(1024), p);
}

TEST(PinnedHostAllocatorGpu, EmptyCacheReturnsTheMemoryAndKeepsPendingBlocks) {
  CUDAKIT_REQUIRE_GPU();
  PinnedHostAllocator allocator;
  Stream stream;
  void* cached = allocator.allocate(1u << 20);
  void* pending = allocator.allocate(2u << 20);
  allocator.deallocate(cached);
  cudakit::testing::launch_spin(stream.handle(), kSpinNs);
  allocator.record_stream(pending, stream);
  allocator.deallocate(pending);
  allocator.empty_cache();
  PinnedHostStats stats = allocator.stats();
  EXPECT_EQ(stats.num_host_frees, 1u);
  EXPECT_EQ(stats.reserved_bytes.current, 2u << 20);
  cudaPointerAttributes attributes{};
  CUDAKIT_CHECK_CUDA(cudaPointerGetAttributes(&attributes, pending));
  EXPECT_EQ(attributes.type, cudaMemoryTypeHost);  // still pinned: the spin has not finished
  stream.synchronize();
  allocator.empty_cache();
  EXPECT_EQ(allocator.stats().reserved_bytes.current, 0u);
}

TEST(PinnedHostAllocatorGpu, DestroyingWithACopyInFlightWaitsForIt) {
  CUDAKIT_REQUIRE_GPU();
  constexpr std::size_t kBytes = 1u << 20;
  Stream stream;
  DeviceBuffer device(kBytes);
  {
    PinnedHostAllocator allocator;
    void* source = allocator.allocate(kBytes);
    std::memset(source, 0x42, kBytes);
    cudakit::testing::launch_spin(stream.handle(), kSpinNs);
    CUDAKIT_CHECK_CUDA(
        cudaMemcpyAsync(device.get(), source, kBytes, cudaMemcpyHostToDevice, stream.handle()));
    allocator.record_stream(source, stream);
    allocator.deallocate(source);
  }
  EXPECT_TRUE(stream.query());  // the destructor waited for the copy's event
  EXPECT_EQ(device_mismatches(stream, device.get(), kBytes, 0x42), 0u);
}

TEST(PinnedHostAllocatorGpu, GlobalInstanceAndFreeFunctions) {
  CUDAKIT_REQUIRE_GPU();
  using namespace cudakit::memory;
  Stream stream;
  const PinnedHostStats before = pinned_host_allocator().stats();
  void* p = allocate_pinned(100000);
  EXPECT_TRUE(pinned_host_allocator().owns(p));
  cudakit::testing::launch_spin(stream.handle(), kSpinNs);
  record_stream_pinned(p, stream);
  deallocate_pinned(p);
  EXPECT_FALSE(pinned_host_allocator().owns(p));
  EXPECT_EQ(pinned_host_allocator().stats().pending_blocks, before.pending_blocks + 1);
  void* q = allocate_pinned(100000);
  EXPECT_NE(q, p);
  stream.synchronize();
  deallocate_pinned(q);
  (void)pinned_host_allocator().process_events();
  EXPECT_EQ(pinned_host_allocator().stats().pending_blocks, before.pending_blocks);
  EXPECT_THROW(deallocate_pinned(p), cudakit::InvalidArgumentError);
  pinned_host_allocator().empty_cache();
}

TEST(PinnedHostAllocatorGpu, BlockUsedOnTwoDevicesWaitsForBoth) {
  CUDAKIT_REQUIRE_GPU();
  CUDAKIT_REQUIRE_GPUS(2);
  constexpr std::size_t kBytes = 1u << 20;
  PinnedHostAllocator allocator;
  Stream on0(0), on1(1);
  DeviceBuffer d0(kBytes, 0), d1(kBytes, 1);
  void* source = allocator.allocate(kBytes);
  std::memset(source, 0x66, kBytes);
  // Both devices are busy, device 1 for longer: its event must still hold the block back after
  // device 0 has finished.
  cudakit::testing::launch_spin(on0.handle(), kSpinNs / 3);
  {
    cudakit::DeviceGuard guard(1);
    cudakit::testing::launch_spin(on1.handle(), kSpinNs);
  }
  CUDAKIT_CHECK_CUDA(cudaMemcpyAsync(d0.get(), source, kBytes, cudaMemcpyHostToDevice, on0.handle()));
  {
    cudakit::DeviceGuard guard(1);
    CUDAKIT_CHECK_CUDA(
        cudaMemcpyAsync(d1.get(), source, kBytes, cudaMemcpyHostToDevice, on1.handle()));
  }
  allocator.record_stream(source, on0);
  allocator.record_stream(source, on1);
  allocator.deallocate(source);
  on0.synchronize();
  ASSERT_FALSE(on1.query()) << "device 1's spin finished before the check: raise kSpinNs";
  void* other = allocator.allocate(kBytes);
  EXPECT_NE(other, source);
  on1.synchronize();
  EXPECT_EQ(allocator.allocate(kBytes), source);
  EXPECT_EQ(allocator.stats().num_events_created, 2u);
  EXPECT_EQ(device_mismatches(on0, d0.get(), kBytes, 0x66), 0u);
  {
    cudakit::DeviceGuard guard(1);
    EXPECT_EQ(device_mismatches(on1, d1.get(), kBytes, 0x66), 0u);
  }
}

TEST(PinnedHostAllocatorGpu, HostToDeviceBandwidthFromPinnedMemoryExceeds10GBps) {
  CUDAKIT_REQUIRE_GPU();
  constexpr std::size_t kBytes = 256u << 20;
  constexpr int kRepeats = 5;
  PinnedHostAllocator allocator;
  Stream stream;
  DeviceBuffer device(kBytes);
  void* source = allocator.allocate(kBytes);
  std::memset(source, 0x01, kBytes);
  // Warm-up: first-touch costs of the copy engine and the IOMMU mappings are not bandwidth.
  CUDAKIT_CHECK_CUDA(
      cudaMemcpyAsync(device.get(), source, kBytes, cudaMemcpyHostToDevice, stream.handle()));
  Event start(EventFlags{.enable_timing = true}), stop(EventFlags{.enable_timing = true});
  start.record(stream);
  for (int i = 0; i < kRepeats; ++i) {
    CUDAKIT_CHECK_CUDA(
        cudaMemcpyAsync(device.get(), source, kBytes, cudaMemcpyHostToDevice, stream.handle()));
  }
  stop.record(stream);
  stop.synchronize();
  const double seconds = start.elapsed_time(stop) / 1e3;
  const double gb_per_s = static_cast<double>(kBytes) * kRepeats / seconds / 1e9;
  std::printf("pinned H2D bandwidth: %.1f GB/s (%d x 256 MiB)\n", gb_per_s, kRepeats);
  ::testing::Test::RecordProperty("h2d_gb_per_s", std::to_string(gb_per_s));
  EXPECT_GT(gb_per_s, 10.0);
  allocator.record_stream(source, stream);
  allocator.deallocate(source);
}

}  // namespace
