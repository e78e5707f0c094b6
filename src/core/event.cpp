#include "cudakit/core/event.hpp"

#include <cstdio>
#include <cstring>
#include <utility>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/device.hpp"
#include "cudakit/core/device_guard.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/core/sync_debug_mode.hpp"
#include "cudakit/core/trace_hooks.hpp"

namespace cudakit {

bool EventRef::query() const {
  check_usable("query");
  return handle_ == nullptr || CUDAKIT_QUERY_CUDA(cudaEventQuery(handle_));
}

void EventRef::synchronize() const {
  detail::check_synchronization("Event::synchronize");
  check_usable("synchronize");
  if (handle_ != nullptr) {
    CUDAKIT_TRACE({.kind = TraceEventKind::event_synchronize, .device = device_, .event = handle_});
  }
  if (handle_ != nullptr) CUDAKIT_CHECK_CUDA(cudaEventSynchronize(handle_));
}

Event::Event(EventFlags flags) : flags_(flags) {
  if (flags.enable_timing && flags.interprocess) {
    throw InvalidArgumentError("Event",
                               "an interprocess event cannot have enable_timing: CUDA shares only "
                               "events created with timing disabled");
  }
}

Event::~Event() { destroy(); }

Event::Event(Event&& other) noexcept
    : EventRef(std::exchange(other.handle_, nullptr),
               std::exchange(other.device_, detail::kMovedFromDevice)),
      flags_(other.flags_),
      recorded_(std::exchange(other.recorded_, false)) {}

Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    destroy();
    handle_ = std::exchange(other.handle_, nullptr);
    device_ = std::exchange(other.device_, detail::kMovedFromDevice);
    flags_ = other.flags_;
    recorded_ = std::exchange(other.recorded_, false);
  }
  return *this;
}

void Event::create(int device) {
  DeviceGuard guard(device);
  unsigned cuda_flags = cudaEventDefault;
  if (!flags_.enable_timing) cuda_flags |= cudaEventDisableTiming;
  if (flags_.blocking) cuda_flags |= cudaEventBlockingSync;
  if (flags_.interprocess) cuda_flags |= cudaEventInterprocess | cudaEventDisableTiming;
  CUDAKIT_CHECK_CUDA(cudaEventCreateWithFlags(&handle_, cuda_flags));
  device_ = device;
  CUDAKIT_TRACE({.kind = TraceEventKind::event_create, .device = device_, .event = handle_});
}

void Event::destroy() noexcept {
  if (handle_ == nullptr) return;
  CUDAKIT_TRACE_NOTHROW({.kind = TraceEventKind::event_destroy, .device = device_, .event = handle_});
  CUDAKIT_WARN_CUDA(cudaEventDestroy(std::exchange(handle_, nullptr)));
  recorded_ = false;
}

namespace {
// Whether `stream` is capturing (an external event's operations become graph nodes there). A
// stream that cannot say (the legacy stream during another's global capture) is not, and the
// query's error is not left behind.
bool capturing(StreamRef stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream.handle(), &status) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return status != cudaStreamCaptureStatusNone;
}
}  // namespace

void Event::record(OptionalStream stream_arg) {
  check_usable("record");
  const StreamRef stream = stream_or_current(stream_arg);
  if (handle_ == nullptr) {
    create(stream.device());
  } else if (stream.device() != device_) {
    throw InvalidArgumentError(
        "Event::record", detail::concat("the event belongs to device ", device_,
                                        " but the stream belongs to device ", stream.device(),
                                        ": an event can only be recorded on its own device"));
  }
  CUDAKIT_TRACE({.kind = TraceEventKind::event_record, .device = device_,
                 .stream = stream.handle(), .event = handle_});
  // The flag is for captures; a plain record outside one (the runtime refuses it on a
  // non-capturing stream with some drivers).
  if (flags_.external && capturing(stream)) {
    CUDAKIT_CHECK_CUDA(cudaEventRecordWithFlags(handle_, stream.handle(), cudaEventRecordExternal));
  } else {
    CUDAKIT_CHECK_CUDA(cudaEventRecord(handle_, stream.handle()));
  }
  recorded_ = true;
}

void Event::wait(OptionalStream stream_arg) const {
  check_usable("wait");
  const StreamRef stream = stream_or_current(stream_arg);
  if (!flags_.external || handle_ == nullptr || !capturing(stream)) {
    stream.wait_event(*this);
    return;
  }
  CUDAKIT_TRACE({.kind = TraceEventKind::event_wait, .device = stream.device(), .stream = stream.handle(),
                 .event = handle_});
  CUDAKIT_CHECK_CUDA(cudaStreamWaitEvent(stream.handle(), handle_, cudaEventWaitExternal));
}

float Event::elapsed_time(const Event& end) const {
  check_usable("elapsed_time");
  end.check_usable("elapsed_time");
  const char* api = "Event::elapsed_time";
  if (!flags_.enable_timing || !end.flags_.enable_timing) {
    throw StateError(api, detail::concat("both events need enable_timing = true (start: ",
                                         flags_.enable_timing, ", end: ", end.flags_.enable_timing,
                                         ")"));
  }
  if (!recorded_ || !end.recorded_) {
    throw StateError(api, detail::concat("both events must be recorded first (start recorded: ",
                                         recorded_, ", end recorded: ", end.recorded_, ")"));
  }
  if (device_ != end.device_) {
    throw InvalidArgumentError(api, detail::concat("the events belong to different devices (",
                                                   device_, " and ", end.device_, ")"));
  }
  // One runtime call, as a raw caller makes: cudaEventElapsedTime itself answers
  // cudaErrorNotReady while either event's work is running (two queries before it cost as much
  // again), and the error of failed work as the queries would.
  float ms = 0;
  const cudaError_t status = cudaEventElapsedTime(&ms, handle_, end.handle_);
  if (status == cudaErrorNotReady) [[unlikely]] {
    (void)cudaGetLastError();
    throw StateError(api,
                     "the recorded work has not completed yet: synchronize() the end event first");
  }
  CUDAKIT_CHECK_CUDA(status);
  return ms;
}

IpcEventHandle Event::ipc_handle(int device) {
  check_usable("ipc_handle");
  if (!flags_.interprocess) {
    throw StateError("Event::ipc_handle",
                     "the event was not created with EventFlags{.interprocess = true}");
  }
  if (handle_ == nullptr) create(detail::resolve_device(device, "Event::ipc_handle"));
  cudaIpcEventHandle_t raw;
  CUDAKIT_CHECK_CUDA(cudaIpcGetEventHandle(&raw, handle_));
  static_assert(sizeof(raw) == IpcEventHandle::kSize);
  IpcEventHandle out;
  std::memcpy(out.bytes.data(), &raw, sizeof raw);
  return out;
}

Event Event::from_ipc_handle(const IpcEventHandle& handle, int device) {
  device = detail::resolve_device(device, "Event::from_ipc_handle");
  DeviceGuard guard(device);
  cudaIpcEventHandle_t raw;
  std::memcpy(&raw, handle.bytes.data(), sizeof raw);
  cudaEvent_t opened = nullptr;
  const cudaError_t status = cudaIpcOpenEventHandle(&opened, raw);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    throw CudaError(status, "cudaIpcOpenEventHandle",
                    detail::concat("the handle ", handle.to_hex().substr(0, 16),
                                   "... is not a live interprocess event of another process"));
  }
  Event event(EventFlags{.interprocess = true});
  event.handle_ = opened;
  event.device_ = device;
  // The other process records it; for our purposes it is a recorded event.
  event.recorded_ = true;
  return event;
}

std::string IpcEventHandle::to_hex() const {
  std::string out(kSize * 2, '0');
  static constexpr char kDigits[] = "0123456789abcdef";
  for (std::size_t i = 0; i < kSize; ++i) {
    out[2 * i] = kDigits[bytes[i] >> 4];
    out[2 * i + 1] = kDigits[bytes[i] & 15];
  }
  return out;
}

IpcEventHandle IpcEventHandle::from_hex(std::string_view hex) {
  if (hex.size() != kSize * 2) {
    throw InvalidArgumentError("IpcEventHandle::from_hex",
                               detail::concat("expected ", kSize * 2, " hex digits, got ",
                                              hex.size(), " characters"));
  }
  auto digit = [&](std::size_t i) {
    const char c = hex[i];
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    throw InvalidArgumentError("IpcEventHandle::from_hex",
                               detail::concat("character ", i, " ('", c, "') is not a hex digit"));
  };
  IpcEventHandle out;
  for (std::size_t i = 0; i < kSize; ++i) {
    out.bytes[i] = static_cast<unsigned char>(digit(2 * i) * 16 + digit(2 * i + 1));
  }
  return out;
}

}  // namespace cudakit
