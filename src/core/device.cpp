#include "cudakit/core/device.hpp"

#include <cuda_runtime_api.h>

#include <cstdio>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/device_guard.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/core/sync_debug_mode.hpp"
#include "cudakit/core/trace_hooks.hpp"

namespace cudakit {

int device_count() noexcept {
  // Cached like torch: the set of visible devices does not change during a process.
  static const int count = [] {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      (void)cudaGetLastError();
      return 0;
    }
    return n;
  }();
  return count;
}

bool is_available() noexcept { return device_count() > 0; }

namespace detail {
int resolve_device(int device, const char* api) {
  const int count = device_count();
  if (count == 0) {
    throw CudaError(cudaErrorNoDevice, api, "no CUDA device is available on this machine");
  }
  if (device == -1) {
    // With one visible device the current one can only be 0: no runtime call. This is every
    // defaulted operation's device lookup (current_stream() among them).
    if (count == 1) return 0;
    int current = 0;
    CUDAKIT_CHECK_CUDA(cudaGetDevice(&current));
    return current;
  }
  if (device < 0 || device >= count) {
    throw InvalidArgumentError(api, concat("device ordinal ", device, " is out of range: ", count,
                                           " CUDA device(s) visible, valid ordinals are 0..",
                                           count - 1, " (or -1 for the current device)"));
  }
  return device;
}
}  // namespace detail

int current_device() { return detail::resolve_device(-1, "current_device"); }

void set_device(int device) {
  device = detail::resolve_device(device, "set_device");
  CUDAKIT_CHECK_CUDA(cudaSetDevice(device));
}

DeviceProperties get_device_properties(int device) {
  device = detail::resolve_device(device, "get_device_properties");
  cudaDeviceProp prop{};
  CUDAKIT_CHECK_CUDA(cudaGetDeviceProperties(&prop, device));
  DeviceProperties out;
  out.index = device;
  out.name = prop.name;
  out.major = prop.major;
  out.minor = prop.minor;
  out.multi_processor_count = prop.multiProcessorCount;
  out.total_memory = prop.totalGlobalMem;
  out.l2_cache_size = prop.l2CacheSize;
  out.max_threads_per_multi_processor = prop.maxThreadsPerMultiProcessor;
  out.warp_size = prop.warpSize;
  out.regs_per_multiprocessor = prop.regsPerMultiprocessor;
  out.shared_memory_per_multiprocessor = prop.sharedMemPerMultiprocessor;
  out.shared_memory_per_block_optin = prop.sharedMemPerBlockOptin;
  out.memory_bus_width = prop.memoryBusWidth;
  out.is_integrated = prop.integrated != 0;
  out.unified_addressing = prop.unifiedAddressing != 0;
  out.is_multi_gpu_board = prop.isMultiGpuBoard != 0;
  out.max_threads_per_block = prop.maxThreadsPerBlock;
  out.shared_memory_per_block = prop.sharedMemPerBlock;
  out.pci_device_id = prop.pciDeviceID;
  out.pci_domain_id = prop.pciDomainID;
  // Clock rates left cudaDeviceProp in CUDA 13; they are attributes now.
  cudaDeviceGetAttribute(&out.clock_rate_khz, cudaDevAttrClockRate, device);
  cudaDeviceGetAttribute(&out.memory_clock_rate_khz, cudaDevAttrMemoryClockRate, device);
  (void)cudaGetLastError();
  char uuid[64];
  const auto* b = reinterpret_cast<const unsigned char*>(prop.uuid.bytes);
  std::snprintf(uuid, sizeof uuid,
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                b[14], b[15]);
  out.uuid = uuid;
  char bus[32] = {};
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, device) == cudaSuccess) out.pci_bus_id = bus;
  (void)cudaGetLastError();
  return out;
}

std::pair<int, int> get_device_capability(int device) {
  device = detail::resolve_device(device, "get_device_capability");
  int major = 0, minor = 0;
  CUDAKIT_CHECK_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  CUDAKIT_CHECK_CUDA(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  return {major, minor};
}

std::pair<std::size_t, std::size_t> mem_get_info(int device) {
  DeviceGuard guard(detail::resolve_device(device, "mem_get_info"));
  std::size_t free = 0, total = 0;
  CUDAKIT_CHECK_CUDA(cudaMemGetInfo(&free, &total));
  return {free, total};
}

void synchronize(int device) {
  detail::check_synchronization("synchronize");
  device = detail::resolve_device(device, "synchronize");
  CUDAKIT_TRACE({.kind = TraceEventKind::device_synchronize, .device = device});
  DeviceGuard guard(device);
  CUDAKIT_CHECK_CUDA(cudaDeviceSynchronize());
}

bool can_device_access_peer(int device, int peer_device) {
  device = detail::resolve_device(device, "can_device_access_peer");
  peer_device = detail::resolve_device(peer_device, "can_device_access_peer");
  if (device == peer_device) return true;
  int can = 0;
  CUDAKIT_CHECK_CUDA(cudaDeviceCanAccessPeer(&can, device, peer_device));
  return can != 0;
}

std::pair<int, int> stream_priority_range(int device) {
  DeviceGuard guard(detail::resolve_device(device, "stream_priority_range"));
  int least = 0, greatest = 0;
  CUDAKIT_CHECK_CUDA(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  return {least, greatest};
}

DeviceGuard::DeviceGuard(int device) {
  original_ = detail::resolve_device(-1, "DeviceGuard");
  current_ = device == -1 ? original_ : detail::resolve_device(device, "DeviceGuard");
  if (current_ != original_) CUDAKIT_CHECK_CUDA(cudaSetDevice(current_));
}

DeviceGuard::~DeviceGuard() {
  if (current_ != original_) CUDAKIT_WARN_CUDA(cudaSetDevice(original_));
}

}  // namespace cudakit
