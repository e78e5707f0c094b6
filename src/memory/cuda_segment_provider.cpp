#include "cudakit/memory/cuda_segment_provider.hpp"

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/device.hpp"
#include "cudakit/core/device_guard.hpp"
#include "cudakit/core/driver_api.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/core/log.hpp"
#include "cudakit/core/detail/stream_registry.hpp"
#include "cudakit/core/trace_hooks.hpp"

namespace cudakit::memory {
namespace {

// Note [Exportable chunks]
// Another process can map an expandable arena's memory only through a shareable handle of each
// physical chunk (memory/ipc/ipc_memory_export.hpp), and cuMemExportToShareableHandle gives one
// only for memory created with that handle type requested. So chunks are created exportable as POSIX
// file descriptors wherever the device says it supports them (torch's expandable segments do
// the same); where it does not, or where cuMemCreate refuses the request (some containers and
// virtualized GPUs), chunks are created plain, the log says so once, and exporting a block of
// an expandable arena fails with an error that says why (legacy segments, expandable_segments:
// False, still share through cudaIpcGetMemHandle).
CUmemAllocationProp allocation_prop(int device, bool exportable) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  if (exportable) prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  return prop;
}

// Note [Queries during another thread's capture]
// While any stream captures in cudaStreamCaptureModeGlobal, cudaStreamQuery and cudaEventQuery
// from any thread count as potentially unsafe and invalidate that capture, even for streams
// and events that have nothing to do with it. The allocator asks them only of streams that do
// not capture, so it switches its own thread to the relaxed mode around the call.
class RelaxedCaptureMode {
 public:
  RelaxedCaptureMode() { (void)cudaThreadExchangeStreamCaptureMode(&mode_); }
  ~RelaxedCaptureMode() { (void)cudaThreadExchangeStreamCaptureMode(&mode_); }
  RelaxedCaptureMode(const RelaxedCaptureMode&) = delete;
  RelaxedCaptureMode& operator=(const RelaxedCaptureMode&) = delete;

 private:
  cudaStreamCaptureMode mode_ = cudaStreamCaptureModeRelaxed;
};

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
    int posix_fd = 0;
    drv.cuDeviceGetAttribute(&posix_fd, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, device_);
    exportable_.store(posix_fd != 0 && drv.cuMemExportToShareableHandle != nullptr);
    if (!exportable_.load()) {
      CUDAKIT_LOG(info, "device ", device_, " cannot export memory as POSIX file descriptors: blocks of its "
                  "expandable arenas cannot be shared with other processes (See Note [Exportable chunks])");
    }
    const CUmemAllocationProp prop = allocation_prop(device_, exportable_.load());
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
  // cudaMalloc counts as potentially unsafe during a global-mode capture, on this thread or any
  // other, and would invalidate it; a segment made for a capture (a graph's private pool takes
  // fresh segments) is not part of the captured work, so the call runs in the relaxed mode, as
  // torch's cudaMallocMaybeCapturing does. See Note [Queries during another thread's capture].
  RelaxedCaptureMode relaxed;
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
  CUmemAllocationProp prop = allocation_prop(device_, exportable_.load(std::memory_order_relaxed));
  CUmemGenericAllocationHandle handle = 0;
  CUresult created = drv.cuMemCreate(&handle, bytes, &prop, 0);
  if (prop.requestedHandleTypes != CU_MEM_HANDLE_TYPE_NONE &&
      (created == CUDA_ERROR_NOT_SUPPORTED || created == CUDA_ERROR_NOT_PERMITTED ||
       created == CUDA_ERROR_INVALID_VALUE)) {
    // See Note [Exportable chunks]: plain chunks from now on.
    if (exportable_.exchange(false)) {
      CUDAKIT_LOG(warning, "cuMemCreate refused exportable memory on device ", device_, " (",
                  detail::driver_error_string(created), "): its expandable arenas' blocks cannot be shared "
                  "with other processes; use expandable_segments:False to share them");
    }
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_NONE;
    created = drv.cuMemCreate(&handle, bytes, &prop, 0);
  }
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

// A destroyed stream's mark: an event recorded on it just before its destruction, or none when
// it could take none (it was capturing: what it queued then went into a graph that its
// destruction invalidates). Tokens of such marks are a pointer to a shared_ptr of it with the low
// bit set: event handles are pointers to aligned objects, so their low bit is 0.
struct CudaStreamEvents::FinalMark {
  cudaEvent_t event = nullptr;
  ~FinalMark() {
    if (event) CUDAKIT_WARN_CUDA(cudaEventDestroy(event));
  }
};

namespace {
constexpr StreamEvents::Token kFinalMarkTag = 1;
bool is_final_mark(StreamEvents::Token token) { return (token & kFinalMarkTag) != 0; }
auto* final_mark_of(StreamEvents::Token token) {
  return reinterpret_cast<std::shared_ptr<CudaStreamEvents::FinalMark>*>(token & ~kFinalMarkTag);
}
}  // namespace

std::shared_ptr<CudaStreamEvents::FinalMark> CudaStreamEvents::final_mark(StreamKey stream) {
  if (!any_destroyed_.load(std::memory_order_acquire)) return nullptr;
  std::lock_guard lock(marks_mutex_);
  const auto it = destroyed_.find(stream);
  return it == destroyed_.end() ? nullptr : it->second;
}

void CudaStreamEvents::on_trace_event(int kind, int device, StreamKey stream) {
  if (device != device_) return;
  if (kind == static_cast<int>(TraceEventKind::stream_create)) {
    // A new stream may get a destroyed one's handle: it is not the destroyed stream.
    std::lock_guard lock(marks_mutex_);
    destroyed_.erase(stream);
    return;
  }
  if (kind != static_cast<int>(TraceEventKind::stream_destroy)) return;
  auto mark = std::make_shared<FinalMark>();
  const auto handle = reinterpret_cast<cudaStream_t>(stream);
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(handle, &status) == cudaSuccess && status == cudaStreamCaptureStatusNone) {
    DeviceGuard guard(device_);
    cudaEvent_t event = nullptr;
    if (cudaEventCreateWithFlags(&event, cudaEventDisableTiming) == cudaSuccess &&
        cudaEventRecord(event, handle) == cudaSuccess) {
      mark->event = event;
    } else {
      (void)cudaGetLastError();
      if (event) CUDAKIT_WARN_CUDA(cudaEventDestroy(event));
      CUDAKIT_LOG(warning, "could not mark the work of stream ", handle,
                  " before its destruction; frees that waited for it are released at once");
    }
  } else {
    (void)cudaGetLastError();
  }
  std::lock_guard lock(marks_mutex_);
  destroyed_[stream] = std::move(mark);
  any_destroyed_.store(true, std::memory_order_release);
}

void CudaStreamEvents::hold_destroy_watch() {
  std::lock_guard lock(watch_mutex_);
  if (watch_holds_++ > 0) return;
  try {
    listener_ = attach_trace_listener([this](const TraceEvent& e) {
      on_trace_event(static_cast<int>(e.kind), e.device, reinterpret_cast<StreamKey>(e.stream));
    });
  } catch (...) {
    --watch_holds_;
    throw;
  }
}

void CudaStreamEvents::release_destroy_watch() noexcept {
  std::lock_guard lock(watch_mutex_);
  if (--watch_holds_ > 0) return;
  detach_trace_listener(listener_);
  // No deferred free is left to ask about destroyed streams; the tokens handed out keep their
  // marks alive.
  std::lock_guard marks(marks_mutex_);
  destroyed_.clear();
  any_destroyed_.store(false, std::memory_order_release);
}

StreamEvents::Token CudaStreamEvents::record(StreamKey stream) {
  if (auto mark = final_mark(stream)) {
    return reinterpret_cast<Token>(new std::shared_ptr<FinalMark>(std::move(mark))) | kFinalMarkTag;
  }
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

namespace {
// The event a token waits for; null for a final mark without one (nothing to wait for).
cudaEvent_t event_of(StreamEvents::Token token) {
  if (!is_final_mark(token)) return reinterpret_cast<cudaEvent_t>(token);
  return (*final_mark_of(token))->event;
}
}  // namespace

bool CudaStreamEvents::query(Token token) {
  const cudaEvent_t event = event_of(token);
  RelaxedCaptureMode relaxed;  // See Note [Queries during another thread's capture].
  return !event || CUDAKIT_QUERY_CUDA(cudaEventQuery(event));
}

void CudaStreamEvents::synchronize(Token token) {
  if (const cudaEvent_t event = event_of(token)) CUDAKIT_CHECK_CUDA(cudaEventSynchronize(event));
}

void CudaStreamEvents::make_wait(StreamKey waiter, Token token) {
  if (const cudaEvent_t event = event_of(token)) {
    CUDAKIT_CHECK_CUDA(cudaStreamWaitEvent(reinterpret_cast<cudaStream_t>(waiter), event, 0));
  }
}

std::uint64_t CudaStreamEvents::stream_serial(StreamKey stream) {
  return detail::known_stream_serial(reinterpret_cast<cudaStream_t>(stream));
}

// Note [Idle looks through the driver]
// A stream that lends memory to others is asked whether it is idle about once per block lent
// (Note [A mark with nothing to cover]), and the look is host time on the allocation's path. Its
// three runtime calls (the capture mode exchanged, cudaStreamQuery, the mode back) cost close to
// twice what the same three calls cost through the driver's entry points (notes/allocator.md,
// probe/call_costs.cpp): the runtime's wrappers, not the query, are most of it. So the look goes
// to the driver. The driver answers for the null stream from the thread's current context, where
// the runtime first makes the current device's primary context current: with no current context
// the driver refuses, and the runtime is asked instead.
bool CudaStreamEvents::idle(StreamKey stream) {
  const auto& drv = detail::driver();
  if (drv.cuStreamQuery && drv.cuThreadExchangeStreamCaptureMode) [[likely]] {
    // Relaxed around the query: See Note [Queries during another thread's capture].
    CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
    if (drv.cuThreadExchangeStreamCaptureMode(&mode) == CUDA_SUCCESS) {
      const CUresult status = drv.cuStreamQuery(reinterpret_cast<CUstream>(stream));
      (void)drv.cuThreadExchangeStreamCaptureMode(&mode);
      if (status != CUDA_ERROR_INVALID_CONTEXT) return status == CUDA_SUCCESS;
    }
  }
  RelaxedCaptureMode relaxed;  // See Note [Queries during another thread's capture].
  const cudaError_t status = cudaStreamQuery(reinterpret_cast<cudaStream_t>(stream));
  if (status == cudaSuccess) return true;
  // Not ready, or unknown (a stream the program destroyed): not idle, and no error left behind.
  (void)cudaGetLastError();
  return false;
}

void CudaStreamEvents::release(Token token) noexcept {
  if (is_final_mark(token)) {
    delete final_mark_of(token);
    return;
  }
  std::lock_guard lock(mutex_);
  free_events_.push_back(reinterpret_cast<void*>(token));
}

bool CudaStreamEvents::capturing(StreamKey stream) {
  if (final_mark(stream)) return false;  // destroyed: See Note [Frees during capture]
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
