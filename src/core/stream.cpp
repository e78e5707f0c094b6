#include "cudakit/core/stream.hpp"

#include <optional>
#include <utility>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/detail/stream_registry.hpp"
#include "cudakit/core/device.hpp"
#include "cudakit/core/device_guard.hpp"
#include "cudakit/core/driver_api.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/core/event.hpp"
#include "cudakit/core/sync_debug_mode.hpp"
#include "cudakit/core/trace_hooks.hpp"

namespace cudakit {
namespace {
// Operations on the legacy null stream act on the current device's, so they need the stream's
// device made current; real stream handles carry their device.
struct NullStreamDevice {
  explicit NullStreamDevice(const StreamRef& s) {
    if (s.is_default()) guard.emplace(s.device());
  }
  std::optional<DeviceGuard> guard;
};
}  // namespace

StreamRef::StreamRef() : handle_(nullptr), device_(detail::resolve_device(-1, "StreamRef")) {}

StreamRef::StreamRef(cudaStream_t handle) : handle_(handle) {
  if (handle == nullptr || handle == cudaStreamLegacy || handle == cudaStreamPerThread) {
    device_ = detail::resolve_device(-1, "StreamRef");
  } else {
    CUDAKIT_CHECK_CUDA(cudaStreamGetDevice(handle, &device_));
  }
}

unsigned long long StreamRef::id() const {
  check_usable("id");
  NullStreamDevice on(*this);
  unsigned long long value = 0;
  CUDAKIT_DRIVER_CALL(cuStreamGetId, reinterpret_cast<CUstream>(handle_), &value);
  return value;
}

int StreamRef::priority() const {
  check_usable("priority");
  NullStreamDevice on(*this);
  int value = 0;
  CUDAKIT_CHECK_CUDA(cudaStreamGetPriority(handle_, &value));
  return value;
}

bool StreamRef::query() const {
  check_usable("query");
  NullStreamDevice on(*this);
  return CUDAKIT_QUERY_CUDA(cudaStreamQuery(handle_));
}

void StreamRef::synchronize() const {
  detail::check_synchronization("Stream::synchronize");
  check_usable("synchronize");
  CUDAKIT_TRACE({.kind = TraceEventKind::stream_synchronize, .device = device_, .stream = handle_});
  NullStreamDevice on(*this);
  CUDAKIT_CHECK_CUDA(cudaStreamSynchronize(handle_));
}

void StreamRef::wait_event(const EventRef& event) const {
  check_usable("wait_event");
  if (event.is_null()) return;
  CUDAKIT_TRACE({.kind = TraceEventKind::event_wait, .device = device_, .stream = handle_,
                 .event = event.handle()});
  NullStreamDevice on(*this);
  CUDAKIT_CHECK_CUDA(cudaStreamWaitEvent(handle_, event.handle(), 0));
}

void StreamRef::wait_stream(StreamRef other) const {
  check_usable("wait_stream");
  if (other == *this) return;
  Event marker;
  marker.record(other);
  CUDAKIT_TRACE({.kind = TraceEventKind::stream_wait, .device = device_, .stream = handle_,
                 .other_stream = other.handle(), .event = marker.handle()});
  wait_event(marker);
}

// Note [Creating a stream]
// A stream is made with the runtime call alone where it can be: the priority range is asked
// only for a priority other than 0 (0, the default, lies in every device's range: CUDA's least
// priority is 0), and the device is switched only when the stream's is not the current one
// (one cudaGetDevice, not DeviceGuard's second). The registry's entry reuses the node of a
// destroyed stream (stream_registry.cpp), so a create and destroy allocate nothing of cudakit's.
Stream::Stream(int device, int priority) {
  const int current = detail::resolve_device(-1, "Stream");
  device_ = device == -1 ? current : detail::resolve_device(device, "Stream");
  std::optional<DeviceGuard> guard;
  if (device_ != current) [[unlikely]] guard.emplace(device_);
  if (priority != 0) {
    int least = 0, greatest = 0;
    CUDAKIT_CHECK_CUDA(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    if (priority > least || priority < greatest) {
      throw InvalidArgumentError(
          "Stream", detail::concat("priority ", priority, " is outside device ", device_,
                                   "'s range [", greatest, " (highest), ", least, " (lowest)]"));
    }
  }
  CUDAKIT_CHECK_CUDA(cudaStreamCreateWithPriority(&handle_, cudaStreamNonBlocking, priority));
  detail::note_stream_created(handle_);
  CUDAKIT_TRACE({.kind = TraceEventKind::stream_create, .device = device_, .stream = handle_});
}

Stream::~Stream() { destroy(); }

// Note [Moved-from owners]
// A moved-from owner (Stream, Event, Graph) is invalid, as CCCL's cuda::stream is: its device
// becomes detail::kMovedFromDevice and every member but assignment and destruction throws a
// StateError naming the call. Before, a moved-from Stream held a null handle and so quietly
// became the legacy default stream, which synchronizes with everything: work meant for a side
// stream ran serialized, with no error anywhere. The check is one compare of a field the call
// reads anyway.
Stream::Stream(Stream&& other) noexcept
    : StreamRef(std::exchange(other.handle_, nullptr),
                std::exchange(other.device_, detail::kMovedFromDevice)) {}

Stream& Stream::operator=(Stream&& other) noexcept {
  if (this != &other) {
    destroy();
    handle_ = std::exchange(other.handle_, nullptr);
    device_ = std::exchange(other.device_, detail::kMovedFromDevice);
  }
  return *this;
}

Event Stream::record_event() const {
  Event event;
  event.record(*this);
  return event;
}

cudaStream_t Stream::release() {
  check_usable("release");
  detail::note_stream_gone(handle_);  // its lifetime is the caller's now: no longer known
  return std::exchange(handle_, nullptr);
}

void Stream::destroy() noexcept {
  if (handle_ == nullptr) return;
  // Before: a listener may still mark the work queued on the stream (the caching allocator
  // does, for frees that wait for it: See Note [Frees during capture]).
  CUDAKIT_TRACE_NOTHROW({.kind = TraceEventKind::stream_destroy, .device = device_, .stream = handle_});
  detail::note_stream_gone(handle_);
  // cudaStreamDestroy returns at once; work already queued still completes.
  CUDAKIT_WARN_CUDA(cudaStreamDestroy(std::exchange(handle_, nullptr)));
}

}  // namespace cudakit
