// Capability queries on a real GPU, against cudaGetDeviceProperties; init and is_initialized in
// a fresh child process, and in a child forked after initialization.
#include "cudakit/core/capabilities.hpp"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "cudakit/core/device.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/core/lazy_init.hpp"
#include "support/child_process.hpp"
#include "support/gpu_test.hpp"

namespace {

constexpr const char* kFreshChild = "lazy_init_fresh";

TEST(CapabilitiesGpu, Bf16AndTf32FollowTheComputeCapability) {
  CUDAKIT_REQUIRE_GPU();
  for (int d = 0; d < cudakit::device_count(); ++d) {
    cudaDeviceProp prop{};
    ASSERT_EQ(cudaGetDeviceProperties(&prop, d), cudaSuccess);
    EXPECT_EQ(cudakit::is_bf16_supported(false, d), prop.major >= 8);
    EXPECT_TRUE(cudakit::is_bf16_supported(true, d));
    EXPECT_EQ(cudakit::is_tf32_supported(d), prop.major >= 8);
  }
  EXPECT_THROW((void)cudakit::is_bf16_supported(true, cudakit::device_count()), cudakit::InvalidArgumentError);
}

TEST(CapabilitiesGpu, PropertiesAgreeWithCudaGetDeviceProperties) {
  CUDAKIT_REQUIRE_GPU();
  for (int d = 0; d < cudakit::device_count(); ++d) {
    cudaDeviceProp prop{};
    ASSERT_EQ(cudaGetDeviceProperties(&prop, d), cudaSuccess);
    const cudakit::DeviceProperties p = cudakit::get_device_properties(d);
    EXPECT_EQ(p.is_multi_gpu_board, prop.isMultiGpuBoard != 0);
    EXPECT_EQ(p.max_threads_per_block, prop.maxThreadsPerBlock);
    EXPECT_EQ(p.shared_memory_per_block, prop.sharedMemPerBlock);
    EXPECT_EQ(p.shared_memory_per_block_optin, prop.sharedMemPerBlockOptin);
    EXPECT_EQ(p.pci_device_id, prop.pciDeviceID);
    EXPECT_EQ(p.pci_domain_id, prop.pciDomainID);
    EXPECT_EQ(p.multi_processor_count, prop.multiProcessorCount);
    EXPECT_EQ(p.total_memory, prop.totalGlobalMem);
    // The bus id string holds the same domain, bus and device numbers.
    unsigned int domain = 0, bus = 0, device = 0;
    ASSERT_EQ(std::sscanf(p.pci_bus_id.c_str(), "%x:%x:%x", &domain, &bus, &device), 3) << p.pci_bus_id;
    EXPECT_EQ(static_cast<int>(domain), prop.pciDomainID);
    EXPECT_EQ(static_cast<int>(bus), prop.pciBusID);
    EXPECT_EQ(static_cast<int>(device), prop.pciDeviceID);
    EXPECT_EQ(p.max_threads_per_block, 1024);
    EXPECT_EQ(p.shared_memory_per_block, std::size_t{48} << 10);
  }
}

TEST(CapabilitiesGpu, ArchListRunsOnThisDevice) {
  CUDAKIT_REQUIRE_GPU();
  // The library's kernels load here: machine code of this major version, or PTX not newer.
  const auto [major, minor] = cudakit::get_device_capability(0);
  bool runs = false;
  for (const std::string& arch : cudakit::get_arch_list()) {
    const int number = std::stoi(arch.substr(arch.find('_') + 1));
    if (arch.starts_with("sm_")) runs |= number / 10 == major && number % 10 <= minor;
    else runs |= number <= major * 10 + minor;
  }
  EXPECT_TRUE(runs) << cudakit::get_gencode_flags();
}

TEST(LazyInitGpuChild, InitCreatesTheContextIsInitializedSees) {
  if (cudakit::testing::child_mode() != kFreshChild)
    GTEST_SKIP() << "runs in a child process of LazyInitGpu.InitInAFreshProcess";
  // Asking creates nothing: the answer stays false until something initializes.
  EXPECT_FALSE(cudakit::is_initialized());
  EXPECT_GT(cudakit::device_count(), 0);
  EXPECT_FALSE(cudakit::is_initialized());
  cudakit::init();
  EXPECT_TRUE(cudakit::is_initialized());
  cudakit::init();  // again: nothing to do
  EXPECT_TRUE(cudakit::is_initialized());
}

TEST(LazyInitGpu, InitInAFreshProcess) {
  CUDAKIT_REQUIRE_GPU();
  const auto child = cudakit::testing::run_this_binary(
      "LazyInitGpuChild.InitCreatesTheContextIsInitializedSees",
      {std::string(cudakit::testing::kChildVariable) + "=" + kFreshChild});
  EXPECT_TRUE(child.passed()) << child.output;
}

TEST(LazyInitGpu, AForkedChildIsNotInitialized) {
  CUDAKIT_REQUIRE_GPU();
  cudakit::init();
  ASSERT_TRUE(cudakit::is_initialized());
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) _exit(cudakit::is_initialized() ? 1 : 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "is_initialized() was true in a child forked after init()";
  EXPECT_TRUE(cudakit::is_initialized());
}

}  // namespace
