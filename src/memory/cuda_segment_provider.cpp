#include "cudakit/memory/cuda_segment_provider.hpp"

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/device.hpp"
#include "cudakit/core/device_guard.hpp"
#include "cudakit/core/driver_api.hpp"
#include "cudakit/core/error.hpp"

namespace cudakit::memory {
namespace {

CUmemAllocationProp allocation_prop(int device) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  return prop;
}

}  // namespace

CudaSegmentProvider::CudaSegmentProvider(int device)
    : device_(detail::resolve_device(device, "CudaSegmentProvider")) {
  total_ = get_device_properties(device_).total_memory;
  const auto& drv = detail::driver();
  int vmm = 0;
  if (drv.cuDeviceGetAttribute && drv.cuMemCreate && drv.cuMemMap && drv.cuMemSetAccess) {
    drv.cuDeviceGetAttribute(&vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, device_);
  }
  if (vmm) {
    const CUmemAllocationProp prop = allocation_prop(device_);
    std::size_t granularity = 0;
    CUDAKIT_DRIVER_CALL(cuMemGetAllocationGranularity, &granularity, &prop,
                        CU_MEM_ALLOC_GRANULARITY_RECOMMENDED);
    page_size_ = granularity;
  }
}

CudaSegmentProvider::~CudaSegmentProvider() = default;

std::string CudaSegmentProvider::name() const { return detail::concat("cuda:", device_); }

void* CudaSegmentProvider::allocate_segment(std::size_t bytes, StreamKey) {
  DeviceGuard guard(device_);
  void* p = nullptr;
  const cudaError_t status = cudaMalloc(&p, bytes);
  if (status == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    return nullptr;
  }
  CUDAKIT_CHECK_CUDA(status);
  return p;
}

void CudaSegmentProvider::free_segment(void* ptr, std::size_t, StreamKey) noexcept {
  try {
    DeviceGuard guard(device_);
    CUDAKIT_WARN_CUDA(cudaFree(ptr));
  } catch (...) {
  }
}

void* CudaSegmentProvider::reserve_range(std::size_t bytes) {
  CUdeviceptr base = 0;
  const auto& drv = detail::require_driver(reinterpret_cast<const void*>(detail::driver().cuMemAddressReserve),
                                           "cuMemAddressReserve");
  if (drv.cuMemAddressReserve(&base, bytes, page_size_, 0, 0) != CUDA_SUCCESS) return nullptr;
  return reinterpret_cast<void*>(base);
}

void CudaSegmentProvider::release_range(void* base, std::size_t bytes) noexcept {
  const auto& drv = detail::driver();
  if (drv.cuMemAddressFree) drv.cuMemAddressFree(reinterpret_cast<CUdeviceptr>(base), bytes);
}

bool CudaSegmentProvider::map(void* addr, std::size_t bytes) {
  const auto& drv = detail::driver();
  const CUmemAllocationProp prop = allocation_prop(device_);
  CUmemGenericAllocationHandle handle = 0;
  const CUresult created = drv.cuMemCreate(&handle, bytes, &prop, 0);
  if (created == CUDA_ERROR_OUT_OF_MEMORY) return false;
  CUDAKIT_CHECK_DRIVER(created);
  const auto va = reinterpret_cast<CUdeviceptr>(addr);
  const CUresult mapped = drv.cuMemMap(va, bytes, 0, handle, 0);
  if (mapped != CUDA_SUCCESS) {
    drv.cuMemRelease(handle);
    CUDAKIT_CHECK_DRIVER(mapped);
  }
  CUmemAccessDesc access{};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  const CUresult granted = drv.cuMemSetAccess(va, bytes, &access, 1);
  if (granted != CUDA_SUCCESS) {
    drv.cuMemUnmap(va, bytes);
    drv.cuMemRelease(handle);
    if (granted == CUDA_ERROR_OUT_OF_MEMORY) return false;
    CUDAKIT_CHECK_DRIVER(granted);
  }
  std::lock_guard lock(handles_mutex_);
  handles_[va] = handle;
  return true;
}

void CudaSegmentProvider::unmap(void* addr, std::size_t bytes) noexcept {
  const auto& drv = detail::driver();
  const auto va = reinterpret_cast<CUdeviceptr>(addr);
  CUmemGenericAllocationHandle handle = 0;
  {
    std::lock_guard lock(handles_mutex_);
    auto it = handles_.find(va);
    if (it == handles_.end()) return;
    handle = it->second;
    handles_.erase(it);
  }
  drv.cuMemUnmap(va, bytes);
  drv.cuMemRelease(handle);
}

void CudaSegmentProvider::synchronize(StreamKey) {
  // The whole device, not the stream: cached blocks outlive the streams they were used on, and
  // a stream the program has destroyed must not be touched (torch synchronizes the device too).
  DeviceGuard guard(device_);
  CUDAKIT_CHECK_CUDA(cudaDeviceSynchronize());
}

std::pair<std::size_t, std::size_t> CudaSegmentProvider::memory_info() const {
  return mem_get_info(device_);
}

CudaStreamEvents::~CudaStreamEvents() {
  for (void* e : all_events_) CUDAKIT_WARN_CUDA(cudaEventDestroy(static_cast<cudaEvent_t>(e)));
}

StreamEvents::Token CudaStreamEvents::record(StreamKey stream) {
  cudaEvent_t event = nullptr;
  {
    std::lock_guard lock(mutex_);
    if (!free_events_.empty()) {
      event = static_cast<cudaEvent_t>(free_events_.back());
      free_events_.pop_back();
    }
  }
  if (!event) {
    DeviceGuard guard(device_);
    CUDAKIT_CHECK_CUDA(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
    std::lock_guard lock(mutex_);
    all_events_.push_back(event);
  }
  CUDAKIT_CHECK_CUDA(cudaEventRecord(event, reinterpret_cast<cudaStream_t>(stream)));
  return reinterpret_cast<Token>(event);
}

bool CudaStreamEvents::query(Token token) {
  return CUDAKIT_QUERY_CUDA(cudaEventQuery(reinterpret_cast<cudaEvent_t>(token)));
}

void CudaStreamEvents::synchronize(Token token) {
  CUDAKIT_CHECK_CUDA(cudaEventSynchronize(reinterpret_cast<cudaEvent_t>(token)));
}

void CudaStreamEvents::make_wait(StreamKey waiter, Token token) {
  CUDAKIT_CHECK_CUDA(cudaStreamWaitEvent(reinterpret_cast<cudaStream_t>(waiter), reinterpret_cast<cudaEvent_t>(token), 0));
}

bool CudaStreamEvents::idle(StreamKey stream) {
  const cudaError_t status = cudaStreamQuery(reinterpret_cast<cudaStream_t>(stream));
  if (status == cudaSuccess) return true;
  // Not ready, or unknown (a stream the program destroyed): not idle, and no error left behind.
  (void)cudaGetLastError();
  return false;
}

void CudaStreamEvents::release(Token token) noexcept {
  std::lock_guard lock(mutex_);
  free_events_.push_back(reinterpret_cast<void*>(token));
}

bool CudaStreamEvents::capturing(StreamKey stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  const cudaError_t result = cudaStreamIsCapturing(reinterpret_cast<cudaStream_t>(stream), &status);
  if (result != cudaSuccess) {
    // The legacy default stream while another stream captures in global mode: it cannot take an
    // event now either, so it counts as capturing. The query's error is not left behind.
    (void)cudaGetLastError();
    return true;
  }
  return status != cudaStreamCaptureStatusNone;
}

}  // namespace cudakit::memory
