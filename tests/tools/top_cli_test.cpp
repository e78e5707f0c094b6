// `cudakit top` from the built binary: where NVML is absent it fails, saying why, with exit 1 and
// nothing on stdout; its bad options are refused; where NVML is here, --once --json is one JSON
// object naming every visible CUDA device.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

#include "core/detail/nvml_session.hpp"
#include "cudakit/core/device.hpp"
#include "support/cudakit_cli.hpp"

namespace {

using cudakit::testing::run_cudakit;

class TopCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(cudakit::testing::cudakit_cli_path()))
      GTEST_SKIP() << cudakit::testing::cudakit_cli_path() << " is not built";
  }
};

TEST_F(TopCli, WithoutNvmlFailsSayingWhy) {
  const cudakit::detail::NvmlSession& session = cudakit::detail::nvml_session();
  if (session.api != nullptr) GTEST_SKIP() << "NVML is here";
  for (const auto& args : {std::vector<std::string>{"top", "--once", "--json"},
                           std::vector<std::string>{"top", "--once"}}) {
    const auto run = run_cudakit(args, std::filesystem::temp_directory_path());
    EXPECT_EQ(run.status, 1) << run.err;
    EXPECT_EQ(run.out, "");
    EXPECT_EQ(run.err, "cudakit top: read_device_telemetry: NVML is not available: " + session.reason + "\n");
  }
}

TEST_F(TopCli, BadIntervalIsRefusedWithTheValue) {
  const auto run = run_cudakit({"top", "--interval", "0.01"}, std::filesystem::temp_directory_path());
  EXPECT_EQ(run.status, 2);
  EXPECT_NE(run.err.find("--interval takes seconds from 0.1 to 3600, not '0.01'"), std::string::npos) << run.err;
}

TEST_F(TopCli, HelpSaysHowCudakitProcessesAreToldApart) {
  const auto run = run_cudakit({"top", "--help"}, std::filesystem::temp_directory_path());
  EXPECT_EQ(run.status, 0);
  EXPECT_NE(run.out.find("/proc/<pid>/maps maps libcudakit"), std::string::npos) << run.out;
}

}  // namespace
