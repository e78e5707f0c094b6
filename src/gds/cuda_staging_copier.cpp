#include "gds/detail/cuda_staging_copier.hpp"

#include <cstdint>

#include "cudakit/core/copy.hpp"
#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/device_guard.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/core/log.hpp"
#include "cudakit/memory/host/pinned_host_allocator.hpp"

namespace cudakit::gds::detail {

CudaStagingCopier::~CudaStagingCopier() {
  for (cudaEvent_t event : events_) CUDAKIT_WARN_CUDA(cudaEventDestroy(event));
}

void CudaStagingCopier::prepare_slots(int count) {
  const DeviceGuard guard(stream_.device());
  events_.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    cudaEvent_t event = nullptr;
    CUDAKIT_CHECK_CUDA(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
    events_.push_back(event);
  }
}

void* CudaStagingCopier::allocate_staging(std::size_t bytes) {
  void* buffer = memory::allocate_pinned(bytes);
  // cudaHostAlloc hands out whole pages, and the pinned allocator never splits a block; O_DIRECT
  // needs that alignment, so a buffer without it is a broken promise, not a slow path.
  if (reinterpret_cast<std::uintptr_t>(buffer) % 4096 != 0) {
    memory::deallocate_pinned(buffer);
    throw StateError("GdsFile", cudakit::detail::concat("pinned bounce buffer at ", buffer,
                                                        " is not 4096-byte aligned"));
  }
  return buffer;
}

void CudaStagingCopier::free_staging(void* buffer) noexcept {
  try {
    memory::deallocate_pinned(buffer);
  } catch (const std::exception& error) {
    CUDAKIT_LOG(warning, "GdsFile: returning a bounce buffer failed: ", error.what());
  }
}

void CudaStagingCopier::copy(void* to, const void* from, std::size_t bytes, cudaMemcpyKind kind, int slot) {
  // A one-thread call runs on the caller's thread: its current device is restored afterwards.
  const DeviceGuard guard(stream_.device());
  memcpy_async(to, from, bytes, kind, stream_);
  CUDAKIT_CHECK_CUDA(cudaEventRecord(events_[static_cast<std::size_t>(slot)], stream_.handle()));
}

void CudaStagingCopier::copy_to_destination(void* destination, const void* staging, std::size_t bytes, int slot) {
  copy(destination, staging, bytes, cudaMemcpyHostToDevice, slot);
}

void CudaStagingCopier::copy_from_source(void* staging, const void* source, std::size_t bytes, int slot) {
  copy(staging, source, bytes, cudaMemcpyDeviceToHost, slot);
}

void CudaStagingCopier::wait(int slot) {
  // An event never recorded counts as complete: a slot's first wait returns at once.
  CUDAKIT_CHECK_CUDA(cudaEventSynchronize(events_[static_cast<std::size_t>(slot)]));
}

}  // namespace cudakit::gds::detail
