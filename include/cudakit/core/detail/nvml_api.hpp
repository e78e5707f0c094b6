#pragma once
// NVML's entry points, loaded at run time, for device utilization, temperature, power and
// clocks. See Note [Optional library tables].

#include "cudakit/core/detail/library_table.hpp"

namespace cudakit::detail {

// Note [NVML declarations]
// NVML belongs to the driver, not to the toolkit: libnvidia-ml comes with the driver, and
// nvml.h is not in every toolkit's include directory. The table therefore declares each
// signature itself, with the few types of nvml.h they need, laid out as that header lays them
// out (a stable C ABI).
enum nvmlReturn_t : int { NVML_SUCCESS = 0 };
using nvmlDevice_t = struct nvmlDevice_st*;
struct nvmlUtilization_t {
  unsigned int gpu;     // percent of the last sample period with a kernel running
  unsigned int memory;  // percent of it with device memory being read or written
};
struct nvmlMemory_t {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};
enum nvmlTemperatureSensors_t : int { NVML_TEMPERATURE_GPU = 0 };
enum nvmlClockType_t : int { NVML_CLOCK_GRAPHICS = 0, NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2, NVML_CLOCK_VIDEO = 3 };
// Sizes nvml.h gives for the version buffers.
inline constexpr unsigned int NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE = 80;
inline constexpr unsigned int NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE = 80;

// Every entry exists in every NVML of the drivers CUDA 13 runs on.
#define CUDAKIT_NVML_FUNCTIONS(X)                                                                 \
  X(nvmlInit_v2, required, nvmlReturn_t, ())                                                      \
  X(nvmlShutdown, required, nvmlReturn_t, ())                                                     \
  X(nvmlErrorString, required, const char*, (nvmlReturn_t result))                                \
  X(nvmlSystemGetDriverVersion, required, nvmlReturn_t, (char* version, unsigned int length))     \
  X(nvmlSystemGetNVMLVersion, required, nvmlReturn_t, (char* version, unsigned int length))       \
  X(nvmlDeviceGetCount_v2, required, nvmlReturn_t, (unsigned int* count))                         \
  X(nvmlDeviceGetHandleByIndex_v2, required, nvmlReturn_t, (unsigned int index, nvmlDevice_t* device)) \
  X(nvmlDeviceGetHandleByPciBusId_v2, required, nvmlReturn_t,                                     \
    (const char* pci_bus_id, nvmlDevice_t* device))                                               \
  X(nvmlDeviceGetUtilizationRates, required, nvmlReturn_t,                                        \
    (nvmlDevice_t device, nvmlUtilization_t* utilization))                                        \
  X(nvmlDeviceGetTemperature, required, nvmlReturn_t,                                             \
    (nvmlDevice_t device, nvmlTemperatureSensors_t sensor, unsigned int* celsius))                \
  X(nvmlDeviceGetPowerUsage, required, nvmlReturn_t, (nvmlDevice_t device, unsigned int* milliwatts)) \
  X(nvmlDeviceGetClockInfo, required, nvmlReturn_t,                                               \
    (nvmlDevice_t device, nvmlClockType_t type, unsigned int* mhz))                               \
  X(nvmlDeviceGetMemoryInfo, required, nvmlReturn_t, (nvmlDevice_t device, nvmlMemory_t* memory))

struct NvmlApi {
  CUDAKIT_LIBRARY_TABLE(CUDAKIT_NVML_FUNCTIONS)
};

// The table, loaded on first call (libnvidia-ml.so.1, libnvidia-ml.so). Thread-safe; never
// throws. The version reads "13.580.82" (nvmlSystemGetNVMLVersion, between an nvmlInit_v2 and
// an nvmlShutdown); empty where NVML does not initialize (no driver loaded).
const NvmlApi& nvml_api() noexcept;

}  // namespace cudakit::detail
