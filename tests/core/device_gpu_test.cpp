#include <gtest/gtest.h>

#include <thread>

#include "cudakit/core/device.hpp"
#include "cudakit/core/device_guard.hpp"
#include "cudakit/core/error.hpp"
#include "support/gpu_test.hpp"

namespace {

TEST(DeviceGpu, PropertiesDescribeTheDevice) {
  CUDAKIT_REQUIRE_GPU();
  const auto p = cudakit::get_device_properties(0);
  EXPECT_EQ(p.index, 0);
  EXPECT_FALSE(p.name.empty());
  EXPECT_GE(p.major, 5);
  EXPECT_GT(p.multi_processor_count, 0);
  EXPECT_GT(p.total_memory, std::size_t{1} << 30);
  EXPECT_GT(p.l2_cache_size, 0);
  EXPECT_GE(p.max_threads_per_multi_processor, 1024);
  EXPECT_EQ(p.warp_size, 32);
  EXPECT_EQ(p.uuid.rfind("GPU-", 0), 0u);
  EXPECT_EQ(cudakit::get_device_capability(0), std::make_pair(p.major, p.minor));
  const auto [free, total] = cudakit::mem_get_info(0);
  EXPECT_EQ(total, p.total_memory);
  EXPECT_LE(free, total);
  EXPECT_GT(free, 0u);
}

TEST(DeviceGpu, SetDeviceIsPerThreadAndGuardRestores) {
  CUDAKIT_REQUIRE_GPU();
  const int last = cudakit::device_count() - 1;
  cudakit::set_device(0);
  {
    cudakit::DeviceGuard guard(last);
    EXPECT_EQ(cudakit::current_device(), last);
    EXPECT_EQ(guard.original_device(), 0);
    std::thread([] { EXPECT_EQ(cudakit::current_device(), 0); }).join();
  }
  EXPECT_EQ(cudakit::current_device(), 0);
  EXPECT_THROW(cudakit::DeviceGuard(last + 1), cudakit::InvalidArgumentError);
  EXPECT_EQ(cudakit::current_device(), 0);
}

TEST(DeviceGpu, SynchronizeAndPeerAccess) {
  CUDAKIT_REQUIRE_GPU();
  cudakit::synchronize();
  cudakit::synchronize(0);
  EXPECT_TRUE(cudakit::can_device_access_peer(0, 0));
  if (cudakit::device_count() > 1) (void)cudakit::can_device_access_peer(0, 1);
  const auto [least, greatest] = cudakit::stream_priority_range(0);
  EXPECT_LE(greatest, least);
}

}  // namespace
