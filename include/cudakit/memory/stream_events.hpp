#pragma once
// @brief StreamEvents: how the allocator learns that work queued on a stream has finished. The device
// implementation uses pooled CUDA events; the host one lets tests decide when work "finishes".

#include <cstdint>

#include "cudakit/memory/segment_provider.hpp"

namespace cudakit::memory {

// The allocator's view of stream progress. Called from any thread, with allocator locks held:
// implementations must be thread-safe and must not call back into the allocator.
class StreamEvents {
 public:
  // A mark of a stream's work (an event), from record() until release().
  using Token = std::uintptr_t;
  // Tokens not yet released are the implementation's to clean up.
  virtual ~StreamEvents() = default;
  // Marks the work queued on `stream` so far. Stream-ordered: records an event on `stream`
  // (cudaEventRecord) and returns at once.
  // @param stream the stream to mark.
  // @return a token for query(), synchronize(), make_wait() and release().
  virtual Token record(StreamKey stream) = 0;
  // True when that work has finished. Does not block.
  // @param token a token from record(), not yet released.
  // @return whether the marked work has finished.
  virtual bool query(Token token) = 0;
  // Waits until it has. Blocks the host.
  // @param token a token from record(), not yet released.
  virtual void synchronize(Token token) = 0;
  // Work queued on `waiter` from now on runs after the work that `token` marks: stream-ordered,
  // the host does not wait (cudaStreamWaitEvent). The default waits on the host instead.
  // @param waiter the stream whose later work waits.
  // @param token a token from record(), not yet released.
  virtual void make_wait(StreamKey waiter, Token token) {
    (void)waiter;
    synchronize(token);
  }
  // True when all work queued on `stream` so far has finished (cudaStreamQuery), found without
  // waiting or recording anything; false when unknown. Not asked of a capturing stream.
  // @param stream the stream to ask about.
  // @return true only when the stream is known to be idle.
  [[nodiscard]] virtual bool idle(StreamKey stream) { (void)stream; return false; }
  // A number under which `stream` is known to exist now, never given to another stream; 0 when
  // its existence is not known (the program created it and may have destroyed it). The
  // allocator touches a stream it was not just handed only while this stays what it was when
  // the stream first allocated.
  // @param stream the stream to ask about.
  // @return its serial, or 0 when not known.
  [[nodiscard]] virtual std::uint64_t stream_serial(StreamKey stream) { (void)stream; return 0; }
  // The token will not be used again (its event may be reused).
  // @param token a token from record().
  virtual void release(Token token) noexcept = 0;
  // True while work queued on `stream` goes into a graph being captured: an event recorded there
  // would mark a point of the graph, not of the stream, and querying it would break the capture.
  // @param stream the stream to ask about.
  // @return whether the stream is capturing now.
  [[nodiscard]] virtual bool capturing(StreamKey stream) { (void)stream; return false; }
  // Held while frees wait for streams to stop capturing (See Note [Frees during capture]), once
  // per holder: meanwhile the events learn which streams the program destroys. A destroyed
  // stream then no longer captures, and record() on it marks the work it had queued when it was
  // destroyed, so that such a free is released once that work has finished rather than never.
  virtual void hold_destroy_watch() {}
  // Ends one hold_destroy_watch(); the watch stops with the last hold.
  virtual void release_destroy_watch() noexcept {}
};

}  // namespace cudakit::memory
