#pragma once
// StreamEvents: how the allocator learns that work queued on a stream has finished. The device
// implementation uses pooled CUDA events; the host one lets tests decide when work "finishes".

#include <cstdint>

#include "cudakit/memory/segment_provider.hpp"

namespace cudakit::memory {

class StreamEvents {
 public:
  using Token = std::uintptr_t;
  virtual ~StreamEvents() = default;
  // Marks the work queued on `stream` so far.
  virtual Token record(StreamKey stream) = 0;
  // True when that work has finished.
  virtual bool query(Token token) = 0;
  // Waits until it has.
  virtual void synchronize(Token token) = 0;
  // Work queued on `waiter` from now on runs after the work that `token` marks: stream-ordered,
  // the host does not wait (cudaStreamWaitEvent). The default waits on the host instead.
  virtual void make_wait(StreamKey waiter, Token token) {
    (void)waiter;
    synchronize(token);
  }
  // True when all work queued on `stream` so far has finished (cudaStreamQuery), found without
  // waiting or recording anything; false when unknown. Not asked of a capturing stream.
  [[nodiscard]] virtual bool idle(StreamKey stream) { (void)stream; return false; }
  // The token will not be used again.
  virtual void release(Token token) noexcept = 0;
  // True while work queued on `stream` goes into a graph being captured: an event recorded there
  // would mark a point of the graph, not of the stream, and querying it would break the capture.
  [[nodiscard]] virtual bool capturing(StreamKey stream) { (void)stream; return false; }
};

}  // namespace cudakit::memory
