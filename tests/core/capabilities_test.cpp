// Capability queries without a GPU: the architectures this build holds, and the answers that
// hold where no device is present.
#include "cudakit/core/capabilities.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cudakit/core/device.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/core/lazy_init.hpp"

namespace {

using cudakit::detail::parse_cuda_architectures;
using Archs = std::vector<std::string>;

TEST(Capabilities, CmakeArchitecturesBecomeTorchsArchNames) {
  EXPECT_EQ(parse_cuda_architectures("90"), (Archs{"sm_90", "compute_90"}));
  EXPECT_EQ(parse_cuda_architectures("80;90-real"), (Archs{"sm_80", "compute_80", "sm_90"}));
  EXPECT_EQ(parse_cuda_architectures("75-real;90a-virtual"), (Archs{"sm_75", "compute_90a"}));
  EXPECT_EQ(parse_cuda_architectures("90a;100f-real"), (Archs{"sm_90a", "compute_90a", "sm_100f"}));
}

TEST(Capabilities, MalformedArchitecturesAreNamed) {
  for (const char* bad : {"", "sm_90", "90-fake", "90;;80", "native", "9x", "-real"}) {
    try {
      (void)parse_cuda_architectures(bad);
      ADD_FAILURE() << "'" << bad << "' was accepted";
    } catch (const cudakit::InvalidArgumentError& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("CUDA architectures '") + bad + "'"), std::string::npos)
          << e.what();
    }
  }
}

TEST(Capabilities, ArchListIsWhatTheBuildWasConfiguredFor) {
  // CUDAKIT_TEST_CUDA_ARCHITECTURES: CMAKE_CUDA_ARCHITECTURES of this build (tests/CMakeLists.txt).
  std::string configured = CUDAKIT_TEST_CUDA_ARCHITECTURES;
  std::replace(configured.begin(), configured.end(), ',', ';');
  if (configured == "all" || configured == "all-major" || configured == "native")
    GTEST_SKIP() << "CMake resolves '" << configured << "' itself";
  EXPECT_EQ(cudakit::get_arch_list(), parse_cuda_architectures(configured));
  if (configured == "90") {  // the default
    EXPECT_EQ(cudakit::get_arch_list(), (Archs{"sm_90", "compute_90"}));
    EXPECT_EQ(cudakit::get_gencode_flags(),
              "-gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90");
  }
}

TEST(Capabilities, GencodeFlagsHaveOneEntryPerArch) {
  const Archs archs = cudakit::get_arch_list();
  ASSERT_FALSE(archs.empty());
  std::string expected;
  for (const std::string& arch : archs) {
    const std::string number = arch.substr(arch.find('_') + 1);
    expected += (expected.empty() ? "" : " ") + std::string("-gencode arch=compute_") + number + ",code=" + arch;
  }
  EXPECT_EQ(cudakit::get_gencode_flags(), expected);
}

TEST(Capabilities, NativeBf16FromComputeCapabilityEight) {
  EXPECT_FALSE(cudakit::detail::has_native_bf16(7));
  EXPECT_TRUE(cudakit::detail::has_native_bf16(8));
  EXPECT_TRUE(cudakit::detail::has_native_bf16(9));
}

TEST(Capabilities, WithoutADeviceNothingIsSupportedOrInitialized) {
  if (cudakit::is_available()) GTEST_SKIP() << "a GPU is here: the GPU tier checks the answers";
  EXPECT_FALSE(cudakit::is_bf16_supported());
  EXPECT_FALSE(cudakit::is_bf16_supported(/*including_emulation=*/false));
  EXPECT_FALSE(cudakit::is_tf32_supported());
  EXPECT_FALSE(cudakit::is_initialized());
  try {
    cudakit::init();
    ADD_FAILURE() << "init() without a device did not throw";
  } catch (const cudakit::CudaError& e) {
    EXPECT_EQ(e.cuda_status(), cudaErrorNoDevice);
    EXPECT_EQ(e.api(), "init");
  }
  EXPECT_FALSE(cudakit::is_initialized());
}

}  // namespace
