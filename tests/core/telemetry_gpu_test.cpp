// Telemetry on a real GPU: every reading plausible, this process and its 1 GiB seen, ordinal and
// UUID naming the same device, and CUDA ordinals mapped through UUIDs under CUDA_VISIBLE_DEVICES.
#include "cudakit/core/telemetry.hpp"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "cudakit/core/device.hpp"
#include "cudakit/core/error.hpp"
#include "support/child_process.hpp"
#include "support/gpu_test.hpp"

namespace {

constexpr std::size_t kGiB = std::size_t{1} << 30;
constexpr const char* kVisibleChild = "telemetry_visible_devices";
constexpr const char* kExpectedUuidVariable = "CUDAKIT_TEST_EXPECTED_UUID";

// 1 GiB straight from cudaMalloc, for the test's life.
struct GiBAllocation {
  void* ptr = nullptr;
  GiBAllocation() { EXPECT_EQ(cudaMalloc(&ptr, kGiB), cudaSuccess); }
  ~GiBAllocation() { cudaFree(ptr); }
};

const cudakit::GpuProcess* find_pid(const std::vector<cudakit::GpuProcess>& processes, unsigned int pid) {
  const auto it = std::find_if(processes.begin(), processes.end(),
                               [&](const cudakit::GpuProcess& p) { return p.pid == pid; });
  return it == processes.end() ? nullptr : &*it;
}

std::string pids(const std::vector<cudakit::GpuProcess>& processes) {
  std::string out;
  for (const auto& p : processes) out += std::to_string(p.pid) + " ";
  return out;
}

TEST(TelemetryGpu, ReadingsArePlausible) {
  CUDAKIT_REQUIRE_GPU();
  const unsigned int celsius = cudakit::temperature();
  EXPECT_GE(celsius, 10u);
  EXPECT_LE(celsius, 100u);
  EXPECT_GT(cudakit::power_draw(), 0u);
  EXPECT_GT(cudakit::clock_rate(), 0u);
  EXPECT_LE(cudakit::utilization(), 100u);
  EXPECT_LE(cudakit::memory_usage(), 100u);
  EXPECT_LE(cudakit::device_memory_used(), cudakit::get_device_properties(0).total_memory + kGiB);
}

TEST(TelemetryGpu, ThisProcessAndItsGibAreSeen) {
  CUDAKIT_REQUIRE_GPU();
  cudakit::set_device(0);
  const GiBAllocation gib;
  ASSERT_NE(gib.ptr, nullptr);
  EXPECT_GE(cudakit::device_memory_used(0), kGiB);
  const auto processes = cudakit::list_gpu_processes(0);
  const cudakit::GpuProcess* self = find_pid(processes, static_cast<unsigned int>(getpid()));
  // See Note [NVML and process ids]: a driver that reports host pids inside a container fails here.
  ASSERT_NE(self, nullptr) << "pid " << getpid() << " not among NVML's: " << pids(processes);
  ASSERT_TRUE(self->used_memory.has_value());
  EXPECT_GE(*self->used_memory, kGiB);
  EXPECT_FALSE(self->name.empty());
  EXPECT_EQ(self->uses_cudakit, std::optional<bool>(true)) << "this binary links libcudakit";
}

TEST(TelemetryGpu, UuidAndOrdinalNameTheSameDevice) {
  CUDAKIT_REQUIRE_GPU();
  for (int d = 0; d < cudakit::device_count(); ++d) {
    cudakit::set_device(d);
    const GiBAllocation gib;  // so that both lists hold this process
    const std::string uuid = cudakit::get_device_properties(d).uuid;
    EXPECT_NEAR(double(cudakit::temperature(uuid)), double(cudakit::temperature(d)), 3.0);
    EXPECT_NEAR(double(cudakit::device_memory_used(uuid)), double(cudakit::device_memory_used(d)),
                double(kGiB) / 4);
    const unsigned int self = static_cast<unsigned int>(getpid());
    EXPECT_NE(find_pid(cudakit::list_gpu_processes(uuid), self), nullptr);
    EXPECT_NE(find_pid(cudakit::list_gpu_processes(d), self), nullptr);
    EXPECT_GT(cudakit::clock_rate(uuid), 0u);
    EXPECT_GT(cudakit::power_draw(uuid), 0u);
    EXPECT_LE(cudakit::utilization(uuid), 100u);
    EXPECT_LE(cudakit::memory_usage(uuid), 100u);
  }
  cudakit::set_device(0);
}

TEST(TelemetryGpu, EveryVisibleDeviceIsInTheAllDevicesView) {
  CUDAKIT_REQUIRE_GPU();
  const auto all = cudakit::read_device_telemetry();
  for (int d = 0; d < cudakit::device_count(); ++d) {
    const std::string uuid = cudakit::get_device_properties(d).uuid;
    const auto it = std::find_if(all.begin(), all.end(), [&](const auto& t) { return t.cuda_ordinal == d; });
    ASSERT_NE(it, all.end()) << "CUDA device " << d;
    EXPECT_EQ(it->uuid, uuid);
    EXPECT_FALSE(it->name.empty());
    EXPECT_GT(it->memory_total, 0u);
    EXPECT_TRUE(it->temperature.has_value());
    EXPECT_TRUE(it->clock_rate.has_value());
  }
  for (const auto& t : all) EXPECT_LT(t.cuda_ordinal, cudakit::device_count());
}

TEST(TelemetryGpu, AbsentUuidAndOrdinalAreRefusedWithWhatIsThere) {
  CUDAKIT_REQUIRE_GPU();
  const std::string absent = "GPU-00000000-0000-0000-0000-000000000000";
  try {
    (void)cudakit::temperature(absent);
    ADD_FAILURE() << "an absent UUID was accepted";
  } catch (const cudakit::InvalidArgumentError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("no GPU has the UUID '" + absent + "'"), std::string::npos) << what;
    EXPECT_NE(what.find(cudakit::get_device_properties(0).uuid), std::string::npos) << what;
  }
  const int count = cudakit::device_count();
  try {
    (void)cudakit::power_draw(count);
    ADD_FAILURE() << "ordinal " << count << " was accepted";
  } catch (const cudakit::InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("device ordinal " + std::to_string(count) + " is out of range"),
              std::string::npos) << e.what();
  }
}

TEST(TelemetryGpuChild, OrdinalZeroIsTheOneDeviceMadeVisible) {
  if (cudakit::testing::child_mode() != kVisibleChild)
    GTEST_SKIP() << "runs in a child process of TelemetryGpu.VisibleDevicesAreMappedByUuid";
  const std::string expected = cudakit::testing::env_or(kExpectedUuidVariable, "");
  ASSERT_EQ(cudakit::device_count(), 1);
  EXPECT_EQ(cudakit::get_device_properties(0).uuid, expected);
  const auto all = cudakit::read_device_telemetry();
  int visible = 0;
  for (const auto& t : all) {
    if (t.cuda_ordinal == 0) {
      ++visible;
      EXPECT_EQ(t.uuid, expected);
    } else {
      EXPECT_EQ(t.cuda_ordinal, -1) << t.uuid;
    }
  }
  EXPECT_EQ(visible, 1);
  const GiBAllocation gib;
  EXPECT_NE(find_pid(cudakit::list_gpu_processes(0), static_cast<unsigned int>(getpid())), nullptr);
  EXPECT_NE(find_pid(cudakit::list_gpu_processes(expected), static_cast<unsigned int>(getpid())), nullptr);
}

TEST(TelemetryGpu, VisibleDevicesAreMappedByUuid) {
  CUDAKIT_REQUIRE_GPU();
  // The last device, alone: with several GPUs its CUDA ordinal (0 in the child) differs from its
  // NVML index, which an index-for-index mapping would get wrong.
  const std::string uuid = cudakit::get_device_properties(cudakit::device_count() - 1).uuid;
  const auto child = cudakit::testing::run_this_binary(
      "TelemetryGpuChild.OrdinalZeroIsTheOneDeviceMadeVisible",
      {std::string(cudakit::testing::kChildVariable) + "=" + kVisibleChild, "CUDA_VISIBLE_DEVICES=" + uuid,
       std::string(kExpectedUuidVariable) + "=" + uuid});
  EXPECT_TRUE(child.passed()) << child.output;
}

}  // namespace
