// GPU tier: each backend of the device-wide allocator (native, cudaMallocAsync, caching off,
// pluggable) behind memory::allocate — memory, record_stream, statistics, empty_cache, and the
// tensor layer and cuBLAS workspace drawing from it. The backend is process-wide and final, so
// each runs the BackendChildGpu tests in a child process of this binary; native runs them too,
// as the control that the tests themselves hold.

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <vector>

#include "cudakit/core/device.hpp"
#include "cudakit/core/device_guard.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/core/stream.hpp"
#include "cudakit/memory/device_allocator.hpp"
#include "cudakit/memory/pluggable_allocator.hpp"
#include "cudakit/memory/snapshot.hpp"
#include "cudakit/tensor/cublas_workspace.hpp"
#include "cudakit/tensor/factories.hpp"
#include "cudakit/tensor/matmul.hpp"
#include "support/child_process.hpp"
#include "support/gpu_test.hpp"
#include "support/kernels.hpp"

namespace cudakit::memory {
namespace {

constexpr std::size_t MiB = std::size_t{1} << 20;
constexpr auto kAll = static_cast<std::size_t>(StatPool::all);

// ---- The children ----

// A stream-ordered allocator of the test's own for the pluggable child: cudaMallocAsync and
// cudaFreeAsync on the stream cudakit passes, counted.
std::atomic<long> g_plug_allocs{0};
std::atomic<long> g_plug_frees{0};
void* plug_alloc(ssize_t size, int device, cudaStream_t stream) {
  ++g_plug_allocs;
  DeviceGuard guard(device);
  void* p = nullptr;
  if (cudaMallocAsync(&p, static_cast<std::size_t>(size), stream) != cudaSuccess) {
    (void)cudaGetLastError();
    return nullptr;
  }
  return p;
}
void plug_free(void* p, ssize_t, int device, cudaStream_t stream) {
  ++g_plug_frees;
  DeviceGuard guard(device);
  CUDAKIT_WARN_CUDA(cudaFreeAsync(p, stream));
}

// Which backend this child runs, installed on the first call ("" outside a child).
std::string child_backend() {
  const std::string mode = cudakit::testing::child_mode();
  if (mode == "pluggable" && get_allocator_backend() != "pluggable") {
    change_current_allocator(PluggableAllocator(plug_alloc, plug_free));
  }
  return mode;
}
// The name get_allocator_backend() gives for each child.
std::string expected_name(const std::string& mode) {
  if (mode == "cudaMallocAsync" || mode == "pluggable") return mode;
  return "native";  // native and caching off
}
// Backends that hand each allocation to an underlying allocator: exact bytes, one call each.
bool is_tracked(const std::string& mode) { return mode != "native"; }

#define CUDAKIT_BACKEND_CHILD(mode)                                                       \
  CUDAKIT_REQUIRE_GPU();                                                                  \
  const std::string mode = child_backend();                                               \
  if (mode.empty()) GTEST_SKIP() << "runs in a child process of AllocatorBackendsGpu.*"

unsigned long long count_mismatches(StreamRef s, const void* p, std::size_t n, std::uint8_t v) {
  unsigned long long* counter = nullptr;
  CUDAKIT_CHECK_CUDA(cudaMalloc(reinterpret_cast<void**>(&counter), sizeof *counter));
  CUDAKIT_CHECK_CUDA(cudaMemsetAsync(counter, 0, sizeof *counter, s.handle()));
  cudakit::testing::launch_count_mismatches(s.handle(), p, n, v, counter);
  unsigned long long host = 0;
  CUDAKIT_CHECK_CUDA(cudaMemcpyAsync(&host, counter, sizeof host, cudaMemcpyDeviceToHost, s.handle()));
  s.synchronize();
  CUDAKIT_CHECK_CUDA(cudaFree(counter));
  return host;
}

TEST(BackendChildGpu, ReportsItsNameAndRefusesASwapOnceUsed) {
  CUDAKIT_BACKEND_CHILD(mode);
  EXPECT_EQ(get_allocator_backend(), expected_name(mode));
  Stream s;
  void* p = allocate(1024, s);
  try {
    change_current_allocator(PluggableAllocator(plug_alloc, plug_free));
    ADD_FAILURE() << "swapped after an allocation";
  } catch (const StateError& e) {
    EXPECT_NE(std::string(e.what()).find("Can't swap an already initialized allocator"), std::string::npos) << e.what();
  }
  EXPECT_EQ(get_allocator_backend(), expected_name(mode));
  deallocate(p);
}

TEST(BackendChildGpu, AllocatesWritableDisjointMemory) {
  CUDAKIT_BACKEND_CHILD(mode);
  Stream s;
  struct Live { void* p; std::size_t n; std::uint8_t v; };
  std::vector<Live> live;
  const std::size_t sizes[] = {1, 512, 4096, 100'000, MiB, 3 * MiB + 7, 40 * MiB};
  for (int round = 0; round < 3; ++round) {
    for (std::size_t n : sizes) {
      const auto v = static_cast<std::uint8_t>(live.size() + 1);
      void* p = allocate(n, s);
      ASSERT_NE(p, nullptr);
      cudakit::testing::launch_fill_bytes(s.handle(), p, n, v);
      live.push_back({p, n, v});
    }
    // Free every other one: the next round reuses their memory.
    for (std::size_t i = live.size(); i-- > 0;) {
      if (i % 2 == 0) {
        deallocate(live[i].p);
        live.erase(live.begin() + static_cast<long>(i));
      }
    }
  }
  for (const Live& l : live) {
    EXPECT_EQ(count_mismatches(s, l.p, l.n, l.v), 0u) << l.n << " bytes at " << l.p;
    deallocate(l.p);
  }
  EXPECT_EQ(allocate(0, s), nullptr);
}

TEST(BackendChildGpu, StatisticsCountEveryAllocation) {
  CUDAKIT_BACKEND_CHILD(mode);
  Stream s;
  s.synchronize();
  reset_peak_memory_stats(0);
  const MemoryStats before = memory_stats(0);
  const long plug_before = g_plug_allocs.load();
  void* a = allocate(3 * MiB, s);
  void* b = allocate(5000, s);
  const MemoryStats held = memory_stats(0);
  const std::int64_t asked = 3 * MiB + 5000;
  EXPECT_EQ(held.allocation[kAll].current, before.allocation[kAll].current + 2);
  EXPECT_EQ(held.requested_bytes[kAll].current, before.requested_bytes[kAll].current + asked);
  if (is_tracked(mode)) {
    EXPECT_EQ(held.allocated_bytes[kAll].current, before.allocated_bytes[kAll].current + asked);
    EXPECT_EQ(held.num_device_alloc, before.num_device_alloc + 2) << "one underlying call each";
  } else {
    EXPECT_GE(held.allocated_bytes[kAll].current, before.allocated_bytes[kAll].current + asked);
  }
  if (mode == "pluggable") EXPECT_EQ(g_plug_allocs.load(), plug_before + 2);
  EXPECT_GE(max_memory_allocated(0), memory_allocated(0));
  EXPECT_GE(memory_reserved(0), memory_allocated(0)) << "reserved holds what is allocated";
  EXPECT_GE(max_memory_reserved(0), memory_reserved(0));

  deallocate(a);
  deallocate(b);
  s.synchronize();
  const MemoryStats after = memory_stats(0);
  EXPECT_EQ(after.allocation[kAll].current, before.allocation[kAll].current);
  EXPECT_EQ(after.allocated_bytes[kAll].current, before.allocated_bytes[kAll].current);
  EXPECT_EQ(after.requested_bytes[kAll].current, before.requested_bytes[kAll].current);
  EXPECT_GE(after.allocated_bytes[kAll].peak, before.allocated_bytes[kAll].current + asked) << "the peak stays";
  reset_peak_memory_stats(0);
  EXPECT_EQ(max_memory_allocated(0), memory_allocated(0));
  EXPECT_NE(memory_summary(0).find("Allocated memory"), std::string::npos);
}

// A block freed while another stream's queued kernels still read it must not be written by
// later work before they finish: the consumer reads the producer's bytes after a long spin,
// while the producer allocates and overwrites blocks of the same size at once.
TEST(BackendChildGpu, RecordStreamKeepsABlockUntilItsUsersFinish) {
  CUDAKIT_BACKEND_CHILD(mode);
  Stream producer, consumer;
  constexpr std::size_t n = 8 * MiB;
  void* buffer = allocate(n, producer);
  cudakit::testing::launch_fill_bytes(producer.handle(), buffer, n, 1);
  consumer.wait_stream(producer);
  cudakit::testing::launch_spin(consumer.handle(), 200'000'000);  // 0.2 s
  unsigned long long* mismatches = nullptr;
  CUDAKIT_CHECK_CUDA(cudaMalloc(reinterpret_cast<void**>(&mismatches), sizeof *mismatches));
  CUDAKIT_CHECK_CUDA(cudaMemset(mismatches, 0, sizeof *mismatches));
  cudakit::testing::launch_count_mismatches(consumer.handle(), buffer, n, 1, mismatches);
  record_stream(buffer, consumer);
  deallocate(buffer);
  if (mode == "uncached") {
    EXPECT_TRUE(consumer.query()) << "cudaFree came before the consumer's kernels finished";
  }
  std::vector<void*> later;
  for (int i = 0; i < 4; ++i) {
    void* p = allocate(n, producer);
    cudakit::testing::launch_fill_bytes(producer.handle(), p, n, 2);
    later.push_back(p);
  }
  consumer.synchronize();
  producer.synchronize();
  unsigned long long host = 1;
  CUDAKIT_CHECK_CUDA(cudaMemcpy(&host, mismatches, sizeof host, cudaMemcpyDeviceToHost));
  EXPECT_EQ(host, 0u) << "the consumer saw the block overwritten before it read it";
  for (void* p : later) deallocate(p);
  CUDAKIT_CHECK_CUDA(cudaFree(mismatches));
}

TEST(BackendChildGpu, EmptyCacheReturnsFreedMemory) {
  CUDAKIT_BACKEND_CHILD(mode);
  Stream s;
  constexpr std::size_t n = 64 * MiB;
  void* p = allocate(n, s);
  cudakit::testing::launch_fill_bytes(s.handle(), p, n, 3);
  const std::size_t with_block = memory_reserved(0);
  EXPECT_GE(with_block, n);
  deallocate(p);
  empty_cache();
  EXPECT_LE(memory_reserved(0) + n, with_block) << "the freed block is still reserved";
  EXPECT_GE(max_memory_reserved(0), with_block);
}

TEST(BackendChildGpu, OutOfMemoryIsAClearErrorAndAllocationGoesOn) {
  CUDAKIT_BACKEND_CHILD(mode);
  Stream s;
  const std::size_t too_much = get_device_properties(0).total_memory * 2;
  try {
    (void)allocate(too_much, s);
    FAIL() << "allocated twice the device's memory";
  } catch (const OutOfMemoryError& e) {
    EXPECT_GE(e.requested_bytes(), too_much);
  }
  void* p = allocate(MiB, s);
  EXPECT_NE(p, nullptr);
  deallocate(p);
  if (mode == "pluggable") return;  // the fraction is the pluggable allocator's business
  const double fraction = static_cast<double>(256 * MiB) / static_cast<double>(get_device_properties(0).total_memory);
  set_per_process_memory_fraction(fraction, 0);
  EXPECT_DOUBLE_EQ(get_per_process_memory_fraction(0), fraction);
  EXPECT_THROW((void)allocate(512 * MiB, s), OutOfMemoryError);
  set_per_process_memory_fraction(1.0, 0);
  p = allocate(512 * MiB, s);
  deallocate(p);
}

TEST(BackendChildGpu, TensorsAndTheCublasWorkspaceComeFromTheBackend) {
  CUDAKIT_BACKEND_CHILD(mode);
  namespace ten = cudakit::tensor;
  const ten::TensorOptions on_gpu{.dtype = ten::DType::float32, .device = ten::Device::cuda(0), .pinned = false};
  const long plug_before = g_plug_allocs.load();
  const MemoryStats before = memory_stats(0);
  const ten::Tensor a = ten::ones({64, 64}, on_gpu);
  const ten::Tensor b = ten::ones({64, 64}, on_gpu);
  const MemoryStats with_inputs = memory_stats(0);
  EXPECT_EQ(with_inputs.allocation[kAll].current, before.allocation[kAll].current + 2);
  EXPECT_EQ(with_inputs.requested_bytes[kAll].current,
            before.requested_bytes[kAll].current + static_cast<std::int64_t>(a.nbytes() + b.nbytes()));
  // The tensor's memory is a live allocation of the backend, seen in its snapshot.
  const auto address = reinterpret_cast<std::uintptr_t>(a.data_ptr());
  bool found = false;
  for (const SegmentSnapshot& seg : memory_snapshot(0).segments) {
    if (address >= seg.address && address < seg.address + seg.total_size) {
      found = true;
      if (is_tracked(mode)) EXPECT_EQ(seg.total_size, a.nbytes()) << "one allocation, one segment";
    }
  }
  EXPECT_TRUE(found) << "the tensor's memory is in no segment of the backend";
  if (mode == "pluggable") EXPECT_EQ(g_plug_allocs.load(), plug_before + 2);

  ten::clear_cublas_workspaces();
  const MemoryStats before_matmul = memory_stats(0);
  const ten::Tensor c = ten::matmul(a, b);
  const MemoryStats after_matmul = memory_stats(0);
  // The result and the (thread, stream)'s cuBLAS workspace, both from the backend.
  EXPECT_GE(after_matmul.allocation[kAll].current, before_matmul.allocation[kAll].current + 2);
  EXPECT_GE(after_matmul.requested_bytes[kAll].current - before_matmul.requested_bytes[kAll].current,
            static_cast<std::int64_t>(c.nbytes() + ten::cublas_workspace_size(0)));
  EXPECT_FLOAT_EQ(c.to_vector<float>()[0], 64.0f);
  ten::clear_cublas_workspaces();
}

// ---- The parents ----

void run_child(const std::string& mode, const std::vector<std::string>& extra_env) {
  CUDAKIT_REQUIRE_GPU();
  std::vector<std::string> env = extra_env;
  env.push_back(std::string(cudakit::testing::kChildVariable) + "=" + mode);
  const auto child = cudakit::testing::run_this_binary("BackendChildGpu.*", env);
  EXPECT_TRUE(child.passed()) << "backend " << mode << ":\n" << child.output;
}

TEST(AllocatorBackendsGpu, NativeBackendInAChildProcess) { run_child("native", {}); }
TEST(AllocatorBackendsGpu, CudaMallocAsyncBackendInAChildProcess) {
  run_child("cudaMallocAsync", {"CUDAKIT_ALLOC_CONF=backend:cudaMallocAsync"});
}
TEST(AllocatorBackendsGpu, UncachedBackendInAChildProcess) {
  run_child("uncached", {"CUDAKIT_NO_CUDA_MEMORY_CACHING=1"});
}
TEST(AllocatorBackendsGpu, PluggableBackendInAChildProcess) { run_child("pluggable", {}); }

}  // namespace
}  // namespace cudakit::memory
