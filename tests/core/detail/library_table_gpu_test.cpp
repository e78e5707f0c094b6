// The tables that declare their own signatures (Note [NVML declarations]) called for real: the
// driver's libnvidia-ml answers through them with what the runtime says about the device.

#include <gtest/gtest.h>

#include <string>

#include "cudakit/core/detail/nvml_api.hpp"
#include "cudakit/core/device.hpp"
#include "support/gpu_test.hpp"

namespace cudakit::detail {
namespace {

TEST(NvmlGpu, DeclaredEntriesDescribeTheDevice) {
  CUDAKIT_REQUIRE_GPU();
  const NvmlApi& nvml = nvml_api();
  // NVML comes with the driver: a machine with a device has it.
  ASSERT_TRUE(nvml.status.loaded) << nvml.status.reason;
  EXPECT_FALSE(nvml.status.version.empty());
  ASSERT_EQ(nvml.nvmlInit_v2(), NVML_SUCCESS);
  EXPECT_STRNE(nvml.nvmlErrorString(NVML_SUCCESS), "");

  char driver[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = {};
  ASSERT_EQ(nvml.nvmlSystemGetDriverVersion(driver, sizeof driver), NVML_SUCCESS);
  EXPECT_NE(std::string(driver).find('.'), std::string::npos) << driver;
  unsigned int count = 0;
  ASSERT_EQ(nvml.nvmlDeviceGetCount_v2(&count), NVML_SUCCESS);
  EXPECT_GE(count, static_cast<unsigned int>(device_count()));  // CUDA_VISIBLE_DEVICES may hide some

  // The same device by PCI bus id and by NVML index, as the runtime names it.
  const DeviceProperties properties = get_device_properties(0);
  nvmlDevice_t device = nullptr;
  ASSERT_EQ(nvml.nvmlDeviceGetHandleByPciBusId_v2(properties.pci_bus_id.c_str(), &device), NVML_SUCCESS)
      << properties.pci_bus_id;
  bool found = false;
  for (unsigned int i = 0; i < count && !found; ++i) {
    nvmlDevice_t other = nullptr;
    ASSERT_EQ(nvml.nvmlDeviceGetHandleByIndex_v2(i, &other), NVML_SUCCESS);
    found = other == device;
  }
  EXPECT_TRUE(found);

  nvmlMemory_t memory{};
  ASSERT_EQ(nvml.nvmlDeviceGetMemoryInfo(device, &memory), NVML_SUCCESS);
  const double ratio = static_cast<double>(memory.total) / static_cast<double>(properties.total_memory);
  EXPECT_GT(ratio, 0.95);
  EXPECT_LT(ratio, 1.05);
  EXPECT_LE(memory.used, memory.total);

  nvmlUtilization_t utilization{};
  ASSERT_EQ(nvml.nvmlDeviceGetUtilizationRates(device, &utilization), NVML_SUCCESS);
  EXPECT_LE(utilization.gpu, 100u);
  EXPECT_LE(utilization.memory, 100u);
  unsigned int celsius = 0, mhz = 0;
  ASSERT_EQ(nvml.nvmlDeviceGetTemperature(device, NVML_TEMPERATURE_GPU, &celsius), NVML_SUCCESS);
  EXPECT_GT(celsius, 0u);
  EXPECT_LT(celsius, 120u);
  ASSERT_EQ(nvml.nvmlDeviceGetClockInfo(device, NVML_CLOCK_SM, &mhz), NVML_SUCCESS);
  EXPECT_GT(mhz, 0u);
  unsigned int milliwatts = 0;
  if (nvml.nvmlDeviceGetPowerUsage(device, &milliwatts) == NVML_SUCCESS) EXPECT_GT(milliwatts, 0u);
  EXPECT_EQ(nvml.nvmlShutdown(), NVML_SUCCESS);
}

}  // namespace
}  // namespace cudakit::detail
