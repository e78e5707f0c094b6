#pragma once
// @brief Stream: an owning, move-only CUDA stream (torch.cuda.Stream).
//
// The stream is created non-blocking (it does not synchronize with the legacy default stream)
// and destroyed with its owner; work still queued on it at destruction runs to completion.

#include "cudakit/core/stream_ref.hpp"

namespace cudakit {

class Event;

class Stream : public StreamRef {
 public:
  // A new non-blocking stream on `device` (-1: current) with `priority`, which must lie in
  // stream_priority_range(device); lower numbers are higher priority, 0 is the default.
  // @throws InvalidArgumentError for a bad device or a priority out of range.
  explicit Stream(int device = -1, int priority = 0);
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  // A moved-from Stream owns nothing, and every use of it throws StateError (it never silently
  // becomes the null stream); assigning a Stream to it makes it usable again.
  Stream(Stream&& other) noexcept;
  Stream& operator=(Stream&& other) noexcept;

  // A reference to this stream. @throws StateError for a moved-from Stream.
  [[nodiscard]] StreamRef ref() const {
    check_usable("ref");
    return *this;
  }
  // Records a new event (no timing) on this stream and returns it: the event completes when the
  // work queued so far on the stream has. @throws CudaError.
  [[nodiscard]] Event record_event() const;
  // Gives up ownership: the caller must destroy the handle. The Stream is then moved-from.
  [[nodiscard]] cudaStream_t release();

 private:
  void destroy() noexcept;
};

}  // namespace cudakit
