// `cudakit top --once --json` on a real GPU: one JSON object naming every visible device, with
// this process (holding 1 GiB, with libcudakit loaded) among its processes.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "cudakit/core/device.hpp"
#include "support/cudakit_cli.hpp"
#include "support/gpu_test.hpp"

namespace {

TEST(TopGpu, OnceJsonRunsAndParses) {
  CUDAKIT_REQUIRE_GPU();
  if (!std::filesystem::exists(cudakit::testing::cudakit_cli_path()))
    GTEST_SKIP() << cudakit::testing::cudakit_cli_path() << " is not built";
  void* ptr = nullptr;
  ASSERT_EQ(cudaMalloc(&ptr, std::size_t{1} << 30), cudaSuccess);
  const auto run = cudakit::testing::run_cudakit({"top", "--once", "--json"}, std::filesystem::temp_directory_path());
  cudaFree(ptr);
  ASSERT_EQ(run.status, 0) << run.err;
  const nlohmann::json j = nlohmann::json::parse(run.out);
  EXPECT_TRUE(j.at("time").is_string());
  const std::string uuid = cudakit::get_device_properties(0).uuid;
  bool found_device = false, found_self = false;
  for (const nlohmann::json& d : j.at("devices")) {
    if (d.at("uuid") != uuid) continue;
    found_device = true;
    EXPECT_EQ(d.at("cuda_ordinal"), 0);  // the tool sees what this process sees
    EXPECT_GE(d.at("temperature").get<int>(), 10);
    EXPECT_GT(d.at("clock_rate_mhz").get<int>(), 0);
    for (const nlohmann::json& p : d.at("processes")) {
      if (p.at("pid") != static_cast<unsigned int>(getpid())) continue;
      found_self = true;
      EXPECT_EQ(p.at("uses_cudakit"), true);
      EXPECT_GE(p.at("used_memory").get<std::size_t>(), std::size_t{1} << 30);
    }
    EXPECT_GE(d.at("memory").at("cudakit").get<std::size_t>(), std::size_t{1} << 30);
  }
  EXPECT_TRUE(found_device) << run.out;
  EXPECT_TRUE(found_self) << run.out;
}

}  // namespace
