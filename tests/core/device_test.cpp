// Host tier: what the core runtime does on any machine, with or without a GPU.

#include <gtest/gtest.h>

#include "cudakit/core/device.hpp"
#include "cudakit/core/driver_api.hpp"
#include "cudakit/core/dynamic_library.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/core/ipc_event_handle.hpp"
#include "cudakit/core/runtime_info.hpp"

namespace {

TEST(Device, CountAndAvailabilityNeverThrowAndAgree) {
  const int n = cudakit::device_count();
  EXPECT_GE(n, 0);
  EXPECT_EQ(cudakit::is_available(), n > 0);
}

TEST(Device, BadOrdinalIsAClearError) {
  const int n = cudakit::device_count();
  try {
    cudakit::set_device(n + 7);
    FAIL() << "no throw";
  } catch (const cudakit::InvalidArgumentError& e) {
    ASSERT_GT(n, 0);
    const std::string what = e.what();
    EXPECT_NE(what.find("device ordinal " + std::to_string(n + 7)), std::string::npos) << what;
    EXPECT_EQ(e.api(), "set_device");
  } catch (const cudakit::CudaError& e) {
    // Without a GPU every device call reports that there is none.
    ASSERT_EQ(n, 0);
    EXPECT_EQ(e.cuda_status(), cudaErrorNoDevice);
    EXPECT_NE(std::string(e.what()).find("no CUDA device"), std::string::npos);
  }
  EXPECT_ANY_THROW(cudakit::get_device_properties(-2));
}

TEST(Device, DriverTableLoadsOnlyWithADriver) {
  const auto& api = cudakit::detail::driver();
  EXPECT_EQ(api.loaded, cudakit::driver_version() > 0);
  if (!api.loaded) {
    EXPECT_EQ(api.cuMemCreate, nullptr);
    EXPECT_THROW(CUDAKIT_DRIVER_CALL(cuMemRelease, CUmemGenericAllocationHandle{}),
                 cudakit::CudaError);
  } else {
    EXPECT_NE(api.cuMemCreate, nullptr);
  }
}

TEST(RuntimeInfo, ReportsEveryComponentAndFeature) {
  const auto components = cudakit::component_versions();
  std::vector<std::string> names;
  for (const auto& c : components) names.push_back(c.name);
  for (const char* expected :
       {"cudakit", "CUDA driver", "CUDA runtime", "cuBLAS", "NVRTC", "NCCL", "CUPTI", "cuFile", "NVML"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end()) << expected;
  }
  for (const auto& c : components) EXPECT_FALSE(c.detail.empty()) << c.name;  // where, or why not
  EXPECT_EQ(components[2].version.substr(0, 3), "13.");  // the runtime we link
  const auto features = cudakit::feature_support();
  EXPECT_EQ(features.size(), 7u);  // graph tools ids, GDS, nvidia-fs, green contexts, VMM, IPC events, NVML
  for (const auto& f : features) EXPECT_FALSE(f.detail.empty()) << f.name;
  // Whether cuFile can DMA at all: the nvidia-fs module, as /proc says.
  const auto nvfs = std::find_if(features.begin(), features.end(),
                                 [](const auto& f) { return f.name.find("nvidia-fs") != std::string::npos; });
  ASSERT_NE(nvfs, features.end());
  EXPECT_EQ(nvfs->supported, !cudakit::nvidia_fs_version().empty());
  EXPECT_EQ(cudakit::format_cuda_version(13000), "13.0");
  EXPECT_EQ(cudakit::format_cuda_version(12080), "12.8");
  EXPECT_EQ(cudakit::format_cuda_version(0), "");
}

TEST(DynamicLibrary, LoadsWhatExistsAndReportsWhatDoesNot) {
  cudakit::DynamicLibrary libc({"libc.so.6"});
  ASSERT_TRUE(libc.is_loaded());
  EXPECT_NE(libc.symbol("malloc"), nullptr);
  EXPECT_EQ(libc.symbol("no_such_symbol_in_libc"), nullptr);
  cudakit::DynamicLibrary missing({"libcudakit_does_not_exist.so.9"});
  EXPECT_FALSE(missing.is_loaded());
  EXPECT_NE(missing.description().find("libcudakit_does_not_exist"), std::string::npos);
  cudakit::DynamicLibrary moved(std::move(libc));
  EXPECT_TRUE(moved.is_loaded());
  EXPECT_FALSE(libc.is_loaded());  // NOLINT(bugprone-use-after-move): moved-from state is documented
}

TEST(IpcEventHandle, HexRoundTripsAndRejectsGarbage) {
  cudakit::IpcEventHandle h;
  for (std::size_t i = 0; i < h.bytes.size(); ++i) h.bytes[i] = static_cast<unsigned char>(i * 37);
  const std::string hex = h.to_hex();
  EXPECT_EQ(hex.size(), 128u);
  EXPECT_EQ(cudakit::IpcEventHandle::from_hex(hex), h);
  try {
    cudakit::IpcEventHandle::from_hex("abc");
    FAIL();
  } catch (const cudakit::InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("expected 128 hex digits, got 3"), std::string::npos);
  }
  std::string bad = hex;
  bad[17] = 'z';
  try {
    cudakit::IpcEventHandle::from_hex(bad);
    FAIL();
  } catch (const cudakit::InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("character 17 ('z')"), std::string::npos) << e.what();
  }
}

}  // namespace
