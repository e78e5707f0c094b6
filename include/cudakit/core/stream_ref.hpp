#pragma once
// @brief StreamRef: a non-owning, trivially copyable reference to a CUDA stream and its device —
// any cudaStream_t, including ones made by other libraries (torch's ExternalStream).
//
// Stream ordering: work queued on one stream runs in the order it was queued; across streams it
// is ordered only by events (wait_event, wait_stream). Every member acts on the stream's own
// device, whatever the caller's current device.

#include <cuda_runtime_api.h>

#include <climits>
#include <cstdint>

namespace cudakit {

class EventRef;

namespace detail {
// The device of a moved-from owner (Stream, Event): every use throws. See Note [Moved-from owners].
inline constexpr int kMovedFromDevice = INT_MIN;
// Throws StateError: "<api>: this <type> was moved from; it owns nothing and cannot be used".
[[noreturn]] void throw_moved_from(const char* type, const char* api);
}  // namespace detail

// A non-owning reference to a CUDA stream and the device it belongs to; cheap to copy and pass by
// value. It does not keep the stream alive: the owner (a Stream, or another library) must outlive
// every use.
// Thread-safety: a StreamRef is a value; calls through it may be made from any thread, as CUDA's
// stream calls may.
class StreamRef {
 public:
  // The legacy default (null) stream of the current device.
  // @throws CudaError when no CUDA device is available.
  StreamRef();
  // A stream whose device is known. No check is made.
  // @param handle the stream; null is the legacy default stream of `device`.
  // @param device the stream's device ordinal; must be the stream's real device.
  constexpr StreamRef(cudaStream_t handle, int device) noexcept : handle_(handle), device_(device) {}
  // Any stream, its device asked of the runtime (cudaStreamGetDevice). A null handle means the
  // legacy default stream of the current device. @throws CudaError for an invalid handle.
  // @param handle the stream; null, cudaStreamLegacy and cudaStreamPerThread refer to the current
  // device's.
  explicit StreamRef(cudaStream_t handle);

  // These and every member below throw StateError on a moved-from Stream (See Note [Moved-from
  // owners]); a StreamRef made from one carries that state.
  // @return the raw cudaStream_t (null for the legacy default stream).
  [[nodiscard]] cudaStream_t handle() const { check_usable("handle"); return handle_; }
  // @return the ordinal of the stream's device.
  [[nodiscard]] int device() const { check_usable("device"); return device_; }
  // @return true for the legacy default (null) stream.
  [[nodiscard]] bool is_default() const { check_usable("is_default"); return handle_ == nullptr; }
  // A process-unique id of the stream (cuStreamGetId); the same for two refs of one stream.
  // @throws CudaError when the driver cannot name the stream.
  // @return the driver's id of the stream.
  [[nodiscard]] unsigned long long id() const;
  // The stream's priority: lower numbers are higher priority. @throws CudaError.
  // @return the stream's priority (0 is the default; negative numbers are higher priority).
  [[nodiscard]] int priority() const;

  // True when all work queued on the stream has finished; the host does not wait.
  // @throws CudaError when queued work failed (the error of that work, reported here).
  // @return true when every operation queued so far has completed.
  [[nodiscard]] bool query() const;
  // Blocks the host until all work queued on the stream has finished.
  // @throws CudaError when queued work failed.
  // @throws StateError under sync debug mode `error` (set_sync_debug_mode), before
  //         synchronizing.
  void synchronize() const;
  // Makes future work on this stream wait for `event` (no-op if it was never recorded), without
  // blocking the host. The event may belong to another device: CUDA orders streams across
  // devices through events.
  // @param event the event whose latest record the stream's later work waits for.
  // @throws CudaError when the wait cannot be queued.
  void wait_event(const EventRef& event) const;
  // Makes future work on this stream wait for all work queued so far on `other` (an event
  // recorded there and waited on here); the host does not block. A no-op when `other` is this
  // stream. The host-side cost is an event record and a stream wait.
  // @param other the stream whose work queued so far this stream's later work waits for.
  // @throws CudaError when the event or the wait cannot be queued.
  void wait_stream(StreamRef other) const;

  // Two refs are equal when they name the same handle on the same device.
  // @param a a stream reference.
  // @param b another stream reference.
  // @return true when both refer to the same stream.
  friend bool operator==(StreamRef a, StreamRef b) noexcept {
    return a.handle_ == b.handle_ && a.device_ == b.device_;
  }

 protected:
  // Throws StateError naming `api` when this is (a ref to) a moved-from Stream.
  // @param api the member being called, for the message.
  void check_usable(const char* api) const {
    if (device_ == detail::kMovedFromDevice) [[unlikely]] detail::throw_moved_from("Stream", api);
  }
  cudaStream_t handle_ = nullptr;  // the stream; null: legacy default
  int device_ = 0;  // its device; kMovedFromDevice when moved from
};

}  // namespace cudakit
