#pragma once
// @brief Stream: an owning, move-only CUDA stream (torch.cuda.Stream).
//
// The stream is created non-blocking (it does not synchronize with the legacy default stream)
// and destroyed with its owner; work still queued on it at destruction runs to completion.

#include "cudakit/core/stream_ref.hpp"

namespace cudakit {

class Event;

// An owning, move-only CUDA stream: created non-blocking on construction, destroyed with its owner.
// Pass it wherever a StreamRef is taken (it is one); hand out ref() to code that must not own it.
class Stream : public StreamRef {
 public:
  // A new non-blocking stream on `device` (-1: current) with `priority`, which must lie in
  // stream_priority_range(device); lower numbers are higher priority, 0 is the default.
  // @throws InvalidArgumentError for a bad device or a priority out of range.
  // @param device the device to create the stream on; -1 means the current device.
  // @param priority the stream's priority; 0 (the default) is the lowest, negative numbers are
  // higher.
  // @throws CudaError when no device is available or stream creation fails.
  explicit Stream(int device = -1, int priority = 0);
  // Destroys the stream without waiting: work still queued on it runs to completion first (as
  // cudaStreamDestroy does). Never throws.
  ~Stream();
  // Not copyable: a Stream has one owner.
  Stream(const Stream&) = delete;
  // Not copyable: a Stream has one owner.
  Stream& operator=(const Stream&) = delete;
  // A moved-from Stream owns nothing, and every use of it throws StateError (it never silently
  // becomes the null stream); assigning a Stream to it makes it usable again.
  // @param other the stream to take; it is moved-from afterwards.
  Stream(Stream&& other) noexcept;
  // Destroys the stream this one owned (as the destructor does), then takes `other`'s.
  // @param other the stream to take; it is moved-from afterwards.
  // @return this stream.
  Stream& operator=(Stream&& other) noexcept;

  // A reference to this stream. @throws StateError for a moved-from Stream.
  // @return a non-owning reference, valid while this Stream lives.
  [[nodiscard]] StreamRef ref() const {
    check_usable("ref");
    return *this;
  }
  // Records a new event (no timing) on this stream and returns it: the event completes when the
  // work queued so far on the stream has. Stream-ordered on this stream; returns at once.
  // @throws CudaError when the event cannot be created or recorded.
  // @return the recorded event (created without timing).
  // @throws StateError for a moved-from Stream.
  [[nodiscard]] Event record_event() const;
  // Gives up ownership: the caller must destroy the handle. The Stream is then moved-from.
  // @return the raw handle, now the caller's to destroy with cudaStreamDestroy.
  // @throws StateError for a moved-from Stream.
  [[nodiscard]] cudaStream_t release();

 private:
  void destroy() noexcept;
};

}  // namespace cudakit
