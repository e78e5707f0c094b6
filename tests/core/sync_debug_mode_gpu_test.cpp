// GPU tier: cudakit's synchronizing calls in sync debug mode — refused in error mode before they
// synchronize, warned about once per call site in warn mode — and the asynchronous ones left
// alone.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cudakit/core/device.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/core/event.hpp"
#include "cudakit/core/stream.hpp"
#include "cudakit/core/sync_debug_mode.hpp"
#include "cudakit/memory/device_allocator.hpp"
#include "cudakit/tensor/factories.hpp"
#include "cudakit/tensor/tensor.hpp"
#include "support/captured_log.hpp"
#include "support/gpu_test.hpp"
#include "support/kernels.hpp"

namespace cudakit {
namespace {

using cudakit::testing::CapturedLog;

class SyncDebugModeGpu : public ::testing::Test {
 protected:
  void TearDown() override { set_sync_debug_mode(SyncDebugMode::off); }
};

TEST_F(SyncDebugModeGpu, ErrorModeRefusesEverySynchronizingCallAndNoAsynchronousOne) {
  CUDAKIT_REQUIRE_GPU();
  Stream s;
  Event e;
  const tensor::Tensor t = tensor::ones({1024}, {tensor::DType::float32, tensor::Device::cuda()}, StreamRef(s));
  set_sync_debug_mode(SyncDebugMode::error);
  // Asynchronous work and queries are no synchronization.
  cudakit::testing::launch_spin(s.handle(), 1'000'000);
  e.record(s);
  (void)e.query();
  (void)s.query();
  void* p = memory::allocate(1 << 20, StreamRef(s));
  memory::deallocate(p);
  EXPECT_THROW(s.synchronize(), StateError);
  EXPECT_THROW(e.synchronize(), StateError);
  EXPECT_THROW(cudakit::synchronize(), StateError);
  EXPECT_THROW((void)t.to_vector<float>(StreamRef(s)), StateError) << "a copy to the host waits";
  EXPECT_THROW(memory::empty_cache(), StateError);
  set_sync_debug_mode(SyncDebugMode::off);
  s.synchronize();
  EXPECT_EQ(t.to_vector<float>(StreamRef(s)), std::vector<float>(1024, 1.0f));
}

TEST_F(SyncDebugModeGpu, WarnModeWarnsOncePerCallSite) {
  CUDAKIT_REQUIRE_GPU();
  Stream s;
  CapturedLog log;
  set_sync_debug_mode(SyncDebugMode::warn);
#pragma GCC unroll 1  // one call site, however often it runs
  for (int i = 0; i < 5; ++i) s.synchronize();
  cudakit::synchronize();
  const auto records = log.records();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_NE(records[0].second.find("Stream::synchronize"), std::string::npos) << records[0].second;
  EXPECT_NE(records[1].second.find("synchronize is a synchronizing operation"), std::string::npos);
}

}  // namespace
}  // namespace cudakit
