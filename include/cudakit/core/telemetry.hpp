#pragma once
// @brief Device telemetry through NVML (torch.cuda.device_memory_used, memory_usage, utilization,
// temperature, power_draw, clock_rate, list_gpu_processes). See Note [Telemetry devices].
//
// NVML is loaded at run time (libnvidia-ml comes with the driver) and initialized once per
// process, on first use; every function here is thread-safe. Where NVML cannot be used, each
// throws NvmlUnavailableError ("NVML is not available: <why>"); `cudakit info` prints the same
// reason. A query NVML refuses on the device (NVML_ERROR_NOT_SUPPORTED, NO_PERMISSION, ...)
// throws NvmlError with NVML's status.
//
// Each function takes the device as a CUDA ordinal (-1: the calling thread's current device) or
// as a UUID string ("GPU-8d3a...", as DeviceProperties::uuid and nvidia-smi -L write it; "MIG-..."
// for a MIG instance). A bad ordinal (below -1, or not a visible device) and a UUID that is
// malformed or names no device throw InvalidArgumentError with the value and what is there.

#include <cstddef>
#include <string_view>
#include <vector>

#include "cudakit/core/device_telemetry.hpp"
#include "cudakit/core/gpu_process.hpp"

namespace cudakit {

// Note [Telemetry devices]
// NVML numbers every GPU of the machine; CUDA numbers those CUDA_VISIBLE_DEVICES lets this
// process see, in its order (by default fastest first, not by PCI bus). The two indices agree
// only by chance, so a CUDA ordinal is never passed to NVML as an index: it is mapped through
// the device's UUID (cudaDeviceProp::uuid, which NVML's nvmlDeviceGetHandleByUUID takes), and
// through its PCI bus id where the UUID is not NVML's (some MIG set-ups). The mapping is made
// once per ordinal and kept: the visible devices do not change during a process.
//
// Note [NVML and process ids]
// NVML reports the pid a process has in the driver's view. Drivers since about 510 translate it
// into the caller's PID namespace, so inside a container a process sees its own pid; older ones
// report host pids, which match nothing in the container (nvidia-smi shows the same). Process
// names and the libcudakit check (/proc/<pid>/maps) are read only for pids this process can see.

// Bytes used on the device, by every process and the driver (NVML's memory info "used"; torch's
// device_memory_used).
// @param device the CUDA ordinal; -1 means the calling thread's current device.
// @return the bytes in use.
// @throws NvmlUnavailableError where NVML cannot be used.
// @throws NvmlError when NVML refuses the query on the device.
// @throws InvalidArgumentError for a bad ordinal (below -1, or not a visible device).
[[nodiscard]] std::size_t device_memory_used(int device = -1);
// The same for the device whose UUID is `uuid`.
// @param uuid the device's UUID, "GPU-..." or "MIG-...".
// @return the bytes in use.
// @throws NvmlUnavailableError where NVML cannot be used.
// @throws NvmlError when NVML refuses the query on the device.
// @throws InvalidArgumentError for a UUID that is malformed or names no device.
[[nodiscard]] std::size_t device_memory_used(std::string_view uuid);

// Percent of the last sample period (1/6 s to 1 s, by product) during which device memory was
// being read or written (NVML's utilization.memory; torch's memory_usage).
// @param device the CUDA ordinal; -1 means the calling thread's current device.
// @return the percentage, 0 to 100.
// @throws NvmlUnavailableError where NVML cannot be used.
// @throws NvmlError when NVML refuses the query on the device.
// @throws InvalidArgumentError for a bad ordinal (below -1, or not a visible device).
[[nodiscard]] unsigned int memory_usage(int device = -1);
// The same for the device whose UUID is `uuid`.
// @param uuid the device's UUID, "GPU-..." or "MIG-...".
// @return the percentage, 0 to 100.
// @throws NvmlUnavailableError where NVML cannot be used.
// @throws NvmlError when NVML refuses the query on the device.
// @throws InvalidArgumentError for a UUID that is malformed or names no device.
[[nodiscard]] unsigned int memory_usage(std::string_view uuid);

// Percent of the last sample period during which one or more kernels ran (utilization.gpu).
// @param device the CUDA ordinal; -1 means the calling thread's current device.
// @return the percentage, 0 to 100.
// @throws NvmlUnavailableError where NVML cannot be used.
// @throws NvmlError when NVML refuses the query on the device.
// @throws InvalidArgumentError for a bad ordinal (below -1, or not a visible device).
[[nodiscard]] unsigned int utilization(int device = -1);
// The same for the device whose UUID is `uuid`.
// @param uuid the device's UUID, "GPU-..." or "MIG-...".
// @return the percentage, 0 to 100.
// @throws NvmlUnavailableError where NVML cannot be used.
// @throws NvmlError when NVML refuses the query on the device.
// @throws InvalidArgumentError for a UUID that is malformed or names no device.
[[nodiscard]] unsigned int utilization(std::string_view uuid);

// The GPU's temperature, degrees Celsius.
// @param device the CUDA ordinal; -1 means the calling thread's current device.
// @return the temperature in degrees Celsius.
// @throws NvmlUnavailableError where NVML cannot be used.
// @throws NvmlError when NVML refuses the query on the device.
// @throws InvalidArgumentError for a bad ordinal (below -1, or not a visible device).
[[nodiscard]] unsigned int temperature(int device = -1);
// The same for the device whose UUID is `uuid`.
// @param uuid the device's UUID, "GPU-..." or "MIG-...".
// @return the temperature in degrees Celsius.
// @throws NvmlUnavailableError where NVML cannot be used.
// @throws NvmlError when NVML refuses the query on the device.
// @throws InvalidArgumentError for a UUID that is malformed or names no device.
[[nodiscard]] unsigned int temperature(std::string_view uuid);

// The board's power draw, milliwatts.
// @param device the CUDA ordinal; -1 means the calling thread's current device.
// @return the power draw in milliwatts.
// @throws NvmlUnavailableError where NVML cannot be used.
// @throws NvmlError when NVML refuses the query on the device.
// @throws InvalidArgumentError for a bad ordinal (below -1, or not a visible device).
[[nodiscard]] unsigned int power_draw(int device = -1);
// The same for the device whose UUID is `uuid`.
// @param uuid the device's UUID, "GPU-..." or "MIG-...".
// @return the power draw in milliwatts.
// @throws NvmlUnavailableError where NVML cannot be used.
// @throws NvmlError when NVML refuses the query on the device.
// @throws InvalidArgumentError for a UUID that is malformed or names no device.
[[nodiscard]] unsigned int power_draw(std::string_view uuid);

// The SM clock, MHz.
// @param device the CUDA ordinal; -1 means the calling thread's current device.
// @return the SM clock in MHz.
// @throws NvmlUnavailableError where NVML cannot be used.
// @throws NvmlError when NVML refuses the query on the device.
// @throws InvalidArgumentError for a bad ordinal (below -1, or not a visible device).
[[nodiscard]] unsigned int clock_rate(int device = -1);
// The same for the device whose UUID is `uuid`.
// @param uuid the device's UUID, "GPU-..." or "MIG-...".
// @return the SM clock in MHz.
// @throws NvmlUnavailableError where NVML cannot be used.
// @throws NvmlError when NVML refuses the query on the device.
// @throws InvalidArgumentError for a UUID that is malformed or names no device.
[[nodiscard]] unsigned int clock_rate(std::string_view uuid);

// Every process with a compute or graphics context on the device, each pid once, with the
// memory it uses (torch's list_gpu_processes gives the same facts as text).
// @param device the CUDA ordinal; -1 means the calling thread's current device.
// @return one entry per process, each pid once.
// @throws NvmlUnavailableError where NVML cannot be used.
// @throws NvmlError when NVML refuses the query on the device.
// @throws InvalidArgumentError for a bad ordinal (below -1, or not a visible device).
[[nodiscard]] std::vector<GpuProcess> list_gpu_processes(int device = -1);
// The same for the device whose UUID is `uuid`.
// @param uuid the device's UUID, "GPU-..." or "MIG-...".
// @return one entry per process, each pid once.
// @throws NvmlUnavailableError where NVML cannot be used.
// @throws NvmlError when NVML refuses the query on the device.
// @throws InvalidArgumentError for a UUID that is malformed or names no device.
[[nodiscard]] std::vector<GpuProcess> list_gpu_processes(std::string_view uuid);

// Every GPU of the machine as NVML numbers them, each read once, with the CUDA ordinal it has in
// this process (what `cudakit top` shows).
// @return one entry per GPU, in NVML's order.
// @throws NvmlUnavailableError where NVML cannot be used.
// @throws NvmlError when NVML cannot enumerate the GPUs.
[[nodiscard]] std::vector<DeviceTelemetry> read_device_telemetry();

namespace detail {
// Throws InvalidArgumentError naming `api` unless `uuid` is "GPU-" or "MIG-" followed by a UUID
// in 8-4-4-4-12 hexadecimal digits. Needs no device.
void check_uuid_syntax(std::string_view uuid, const char* api);
// Whether the text of a /proc/<pid>/maps file maps a file whose name starts with `stem` and a
// '.' ("libcudakit": libcudakit.so, libcudakit.so.0, libcudakit.so.0.1.0). Never throws.
[[nodiscard]] bool maps_library(std::string_view maps, std::string_view stem) noexcept;
}  // namespace detail

}  // namespace cudakit
