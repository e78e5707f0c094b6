#pragma once
// PendingFrees: a shard's blocks that were freed while other streams may still use them
// (record_stream). Each stays pending, unusable, until events recorded on those streams at its
// free have completed.

#include <vector>

#include "cudakit/memory/stream_events.hpp"
#include "memory/detail/block.hpp"

namespace cudakit::memory::detail {

// Note [Frees during capture]
// A block used on other streams (record_stream) is reused only after events recorded on those
// streams at its free have completed. If one of them is being captured into a graph, an event
// recorded there would mark a point of the graph rather than of the stream, and querying it
// would break the capture (PyTorch defers these frees too). Such a free is deferred: the block
// stays pending, unusable, and gets its events at the first allocation or cache release of its
// shard after the capture has ended on every stream that used it.
// A stream the program destroys meanwhile never "ends its capture" as far as a query of its
// handle can tell (the handle is gone: the query fails, which reads as capturing). So while a
// shard has deferred frees it holds the events' destroy watch (StreamEvents::hold_destroy_watch):
// CudaStreamEvents then listens to the trace hooks for stream_destroy, which Stream reports
// before it destroys its handle, and marks the work the stream had queued; the deferred free
// waits for that mark instead. The watch is held only while frees are deferred, because a
// listener makes every reporting site of the trace hooks build and send its event.
class [[gnu::visibility("hidden")]] PendingFrees {
 public:
  [[nodiscard]] bool any_deferred() const noexcept { return !deferred_.empty(); }
  [[nodiscard]] std::size_t deferred_count() const noexcept { return deferred_.size(); }
  [[nodiscard]] bool any_pending() const noexcept { return !pending_.empty(); }

  // Pending block `b` waits for the work queued so far on the streams in b->extra_streams, or
  // is deferred while one of them captures.
  void add(Block* b, StreamEvents& events);
  // Deferred frees whose streams no longer capture get their events now.
  void record_deferred(StreamEvents& events);
  // Calls free(Block*) for each block whose events have completed (waiting for them if `wait`),
  // in the order they were added, and forgets it.
  template <class Free>
  void complete(StreamEvents& events, bool wait, Free&& free) {
    auto it = pending_.begin();
    while (it != pending_.end()) {
      bool done = true;
      for (auto token : it->tokens) {
        if (wait) events.synchronize(token);
        else if (!events.query(token)) {
          done = false;
          break;
        }
      }
      if (!done) {
        ++it;
        continue;
      }
      for (auto token : it->tokens) events.release(token);
      free(it->block);
      it = pending_.erase(it);
    }
  }

 private:
  struct Entry {
    Block* block;
    std::vector<StreamEvents::Token> tokens;
  };
  // Marks the work queued so far on the streams that used `b`.
  void record(Block* b, StreamEvents& events);

  std::vector<Entry> pending_;
  std::vector<Block*> deferred_;  // See Note [Frees during capture].
};

}  // namespace cudakit::memory::detail
