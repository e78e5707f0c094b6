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
enum nvmlReturn_t : int {
  NVML_SUCCESS = 0,
  NVML_ERROR_UNINITIALIZED = 1,
  NVML_ERROR_INVALID_ARGUMENT = 2,
  NVML_ERROR_NOT_SUPPORTED = 3,
  NVML_ERROR_NO_PERMISSION = 4,
  NVML_ERROR_NOT_FOUND = 6,
  NVML_ERROR_INSUFFICIENT_SIZE = 7,
  NVML_ERROR_DRIVER_NOT_LOADED = 9,
  NVML_ERROR_LIBRARY_NOT_FOUND = 12,
  NVML_ERROR_GPU_IS_LOST = 15,
  NVML_ERROR_UNKNOWN = 999,
};
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
// nvmlProcessInfo_t of the _v3 process queries (nvml.h's nvmlProcessInfo_v2_t).
struct nvmlProcessInfo_t {
  unsigned int pid;
  unsigned long long usedGpuMemory;  // bytes; NVML_VALUE_NOT_AVAILABLE where NVML cannot say
  unsigned int gpuInstanceId;        // MIG instance ids; 0xFFFFFFFF without MIG
  unsigned int computeInstanceId;
};
static_assert(sizeof(nvmlProcessInfo_t) == 24, "nvml.h's layout: 4 + 4 padding + 8 + 4 + 4 bytes");
inline constexpr unsigned long long NVML_VALUE_NOT_AVAILABLE = ~0ull;  // nvml.h's (-1)
enum nvmlTemperatureSensors_t : int { NVML_TEMPERATURE_GPU = 0 };
enum nvmlClockType_t : int { NVML_CLOCK_GRAPHICS = 0, NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2, NVML_CLOCK_VIDEO = 3 };
// Sizes nvml.h gives for the string buffers.
inline constexpr unsigned int NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE = 80;
inline constexpr unsigned int NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE = 80;
inline constexpr unsigned int NVML_DEVICE_UUID_V2_BUFFER_SIZE = 96;
inline constexpr unsigned int NVML_DEVICE_NAME_V2_BUFFER_SIZE = 96;

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
  X(nvmlDeviceGetMemoryInfo, required, nvmlReturn_t, (nvmlDevice_t device, nvmlMemory_t* memory)) \
  X(nvmlDeviceGetHandleByUUID, required, nvmlReturn_t, (const char* uuid, nvmlDevice_t* device))  \
  X(nvmlDeviceGetUUID, required, nvmlReturn_t, (nvmlDevice_t device, char* uuid, unsigned int length)) \
  X(nvmlDeviceGetName, required, nvmlReturn_t, (nvmlDevice_t device, char* name, unsigned int length)) \
  X(nvmlDeviceGetIndex, required, nvmlReturn_t, (nvmlDevice_t device, unsigned int* index))       \
  X(nvmlDeviceGetMaxClockInfo, required, nvmlReturn_t,                                            \
    (nvmlDevice_t device, nvmlClockType_t type, unsigned int* mhz))                               \
  X(nvmlDeviceGetPowerManagementLimit, required, nvmlReturn_t,                                    \
    (nvmlDevice_t device, unsigned int* milliwatts))                                              \
  X(nvmlDeviceGetComputeRunningProcesses_v3, required, nvmlReturn_t,                              \
    (nvmlDevice_t device, unsigned int* count, nvmlProcessInfo_t* infos))                         \
  X(nvmlDeviceGetGraphicsRunningProcesses_v3, required, nvmlReturn_t,                             \
    (nvmlDevice_t device, unsigned int* count, nvmlProcessInfo_t* infos))                         \
  X(nvmlSystemGetProcessName, required, nvmlReturn_t, (unsigned int pid, char* name, unsigned int length))

struct NvmlApi {
  CUDAKIT_LIBRARY_TABLE(CUDAKIT_NVML_FUNCTIONS)
};

// The table, loaded on first call (libnvidia-ml.so.1, libnvidia-ml.so). Thread-safe; never
// throws. The version reads "13.580.82" (nvmlSystemGetNVMLVersion, between an nvmlInit_v2 and
// an nvmlShutdown); empty where NVML does not initialize (no driver loaded).
const NvmlApi& nvml_api() noexcept;

}  // namespace cudakit::detail
