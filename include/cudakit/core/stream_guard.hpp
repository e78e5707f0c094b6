#pragma once
// @brief StreamGuard: the C++ form of `with torch.cuda.stream(s):` — makes `s` and its device
// current for the scope, and restores the previous stream and device afterwards.
//
// Stream ordering: the guard only changes which stream later operations use; it neither waits
// nor makes streams wait (torch's context manager does not either).

#include "cudakit/core/device_guard.hpp"
#include "cudakit/core/stream_ref.hpp"

namespace cudakit {

// A scope during which a given stream, and its device, are the calling thread's current ones
// (torch.cuda.stream(s)). Not copyable or movable: it belongs to the scope that made it. Per
// thread: other threads' current streams are unaffected.
class StreamGuard {
 public:
  // @param stream made current, and its device too, for the calling thread until the guard ends.
  // @throws StateError for a moved-from Stream.
  // @throws CudaError when its device cannot be made current.
  explicit StreamGuard(StreamRef stream);
  // Restores the stream and the device that were current; never throws.
  ~StreamGuard();
  // Not copyable: exactly one guard restores the previous state.
  StreamGuard(const StreamGuard&) = delete;
  // Not copyable: exactly one guard restores the previous state.
  StreamGuard& operator=(const StreamGuard&) = delete;

  // The stream that was current on the guarded device before the guard.
  // @return the stream current before the guard, restored at its end.
  [[nodiscard]] StreamRef original_stream() const noexcept { return original_; }
  // The stream the guard made current.
  // @return the guarded stream.
  [[nodiscard]] StreamRef current_stream() const noexcept { return current_; }

 private:
  DeviceGuard device_guard_;
  StreamRef original_;
  StreamRef current_;
};

}  // namespace cudakit
