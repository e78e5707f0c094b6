#pragma once
// @brief Devices: counting, selecting and describing them (torch.cuda.device_count, set_device,
// ...).
//
// Nothing here touches the GPU before it is first called. device_count() and is_available()
// never throw: on a machine with no GPU or no driver they answer 0 and false.

#include <array>
#include <cstddef>
#include <string>
#include <utility>

namespace cudakit {

// What get_device_properties reports; the names follow torch's _CudaDeviceProperties (torch
// 2.11 has them all; pci_bus_id is the whole "domain:bus:device.function" here, where torch's is
// the bus number alone, and the clock rates carry their unit in the name).
struct DeviceProperties {
  int index = -1;  // the device ordinal these properties describe
  std::string name;  // the product name, e.g. "NVIDIA H200"
  int major = 0;  // compute capability, major part
  int minor = 0;  // compute capability, minor part
  int multi_processor_count = 0;  // streaming multiprocessors (SMs)
  std::size_t total_memory = 0;  // bytes
  int l2_cache_size = 0;         // bytes
  int max_threads_per_multi_processor = 0;  // resident threads per SM, at most
  int warp_size = 0;  // threads per warp
  int regs_per_multiprocessor = 0;  // 32-bit registers per SM
  std::size_t shared_memory_per_multiprocessor = 0;  // bytes of shared memory per SM
  std::size_t shared_memory_per_block_optin = 0;  // bytes a block may opt in to
  int memory_bus_width = 0;  // bits
  int clock_rate_khz = 0;  // peak SM clock, kHz (0 if unknown)
  int memory_clock_rate_khz = 0;  // peak memory clock, kHz (0 if unknown)
  bool is_integrated = false;  // shares memory with the host (Tegra)
  bool unified_addressing = false;  // shares one address space with the host
  std::string uuid;          // "GPU-xxxxxxxx-xxxx-..."
  std::string pci_bus_id;    // "0000:19:00.0"; empty if the runtime cannot say
  bool is_multi_gpu_board = false;   // one of several GPUs on one board
  int max_threads_per_block = 0;  // threads per block, at most
  std::size_t shared_memory_per_block = 0;  // bytes a block gets without opting in
  int pci_device_id = 0;     // the device's number on its PCI bus
  int pci_domain_id = 0;  // the PCI domain of the device's bus
};

// Number of visible CUDA devices; 0 when there is no GPU or no usable driver. Never throws.
// @return the count of devices this process can see (CUDA_VISIBLE_DEVICES applies).
int device_count() noexcept;
// True when at least one CUDA device can be used. Never throws.
// @return true when device_count() is positive.
bool is_available() noexcept;
// The calling thread's current device. @throws CudaError when no device is available.
// @return the ordinal of the current device (0 until set_device or a guard changes it).
int current_device();
// Makes `device` current for the calling thread. Other threads' current devices are unchanged.
// @param device the device ordinal; -1 keeps the current device.
// @throws InvalidArgumentError for a bad ordinal.
// @throws CudaError when no device is available or the runtime refuses the device.
void set_device(int device);
// What `device` (-1: the current device) is (torch.cuda.get_device_properties).
// @throws InvalidArgumentError for a bad ordinal.
// @param device the device ordinal; -1 means the current device.
// @return the device's properties.
// @throws CudaError when no device is available or the runtime cannot answer.
DeviceProperties get_device_properties(int device = -1);
// (major, minor) compute capability of `device` (-1: the current device).
// @throws InvalidArgumentError for a bad ordinal.
// @param device the device ordinal; -1 means the current device.
// @return {major, minor}, e.g. {9, 0} for Hopper.
// @throws CudaError when no device is available.
std::pair<int, int> get_device_capability(int device = -1);
// (free, total) bytes of `device`'s memory, as the driver reports them (memory another process
// or cudakit's cache holds counts as used). @throws InvalidArgumentError for a bad ordinal.
// @param device the device ordinal; -1 means the current device.
// @return {free, total} in bytes.
// @throws CudaError when no device is available or the runtime cannot answer.
std::pair<std::size_t, std::size_t> mem_get_info(int device = -1);
// Blocks the host until all work on `device` (-1: the current device), on every stream, has
// finished (cudaDeviceSynchronize): work queued after the call, by other threads, may also be
// waited for.
// @param device the device ordinal; -1 means the current device.
// @throws InvalidArgumentError for a bad ordinal.
// @throws CudaError when queued work failed.
// @throws StateError under sync debug mode `error` (set_sync_debug_mode), before waiting.
void synchronize(int device = -1);
// True when `device` can read and write `peer_device`'s memory directly.
// Peer access must still be enabled before it is used.
// @throws InvalidArgumentError for a bad ordinal.
// @param device the accessing device's ordinal (-1: the current device).
// @param peer_device the ordinal of the device whose memory is accessed (-1: the current device).
// @return true when peer access is possible; always true for a device and itself.
// @throws CudaError when no device is available.
bool can_device_access_peer(int device, int peer_device);
// The device's stream priority range: {least, greatest}. Greatest is numerically lowest (e.g.
// {0, -5}). @throws InvalidArgumentError for a bad ordinal.
// @param device the device ordinal; -1 means the current device.
// @return {least, greatest} priority; Stream accepts any priority between them.
// @throws CudaError when no device is available.
std::pair<int, int> stream_priority_range(int device = -1);

namespace detail {
// Resolves -1 to the current device and validates any other ordinal.
// @throws InvalidArgumentError naming `api`, the ordinal and the device count.
int resolve_device(int device, const char* api);
}  // namespace detail

}  // namespace cudakit
