#pragma once
// StreamMarks: how far a shard's stream has got, as far as the allocator knows: the frees on it
// are stamped, and events recorded there now and then (or a query finding the stream idle) tell
// other streams when a stamped free's queued work has finished (See Note [Memory across
// streams] in caching_allocator.cpp). poll() and release() are called with the shard's lock
// held; stamp() and covers() may be called without it, from another shard's lock.

#include <atomic>
#include <cstdint>

#include "cudakit/memory/stream_events.hpp"

namespace cudakit::memory::detail {

class [[gnu::visibility("hidden")]] StreamMarks {
 public:
  // What a free on this stream now is stamped with: the next mark covers every use the stream
  // had queued before it. (A mark's index is taken before its event is recorded, so that a free
  // that read the previous index was queued before the event: See Note [Memory across
  // streams].)
  [[nodiscard]] std::uint64_t stamp() const noexcept { return recorded_.load(std::memory_order_seq_cst) + 1; }
  // stamp() for something that waits on the next mark (a free, a lent block's return): the
  // stream then has something for a mark to cover (See Note [A mark with nothing to cover]).
  [[nodiscard]] std::uint64_t stamp_use() noexcept {
    const std::uint64_t taken = stamp();
    // After reading recorded_: a stamp read before the next mark takes its index is covered by
    // that mark; one read after finds the flag cleared by it, and sets it again.
    if (!stamped_since_mark_.load(std::memory_order_seq_cst)) stamped_since_mark_.store(true, std::memory_order_seq_cst);
    return taken;
  }
  // Whether a look at the stream could tell anything new: a mark is in flight, or something was
  // stamped since the last mark was taken (called with the shard's lock held).
  [[nodiscard]] bool has_news_to_find() const noexcept {
    return in_flight_ || stamped_since_mark_.load(std::memory_order_seq_cst);
  }
  // The work queued before a free stamped `stamp` has finished.
  [[nodiscard]] bool covers(std::uint64_t stamp) const noexcept {
    return stamp <= completed_.load(std::memory_order_acquire);
  }

  // Finds out, without waiting, whether the work before a free stamped `wanted` has finished: the
  // mark in flight completed or, with `may_touch_stream`, the stream is idle now. When neither
  // says so and no mark is in flight, records one then (not on a capturing stream). Callers pass
  // `may_touch_stream` only when the stream surely exists (an allocation on it, or one cudakit
  // knows of): the program may have destroyed it (See Note [Memory across streams]).
  bool poll(StreamEvents& events, StreamKey stream, std::uint64_t wanted, bool may_touch_stream) {
    if (covers(wanted)) return true;
    if (in_flight_) {
      if (!events.query(token_)) return false;  // one mark in flight at a time
      complete(token_index_);
      events.release(token_);
      in_flight_ = false;
      if (covers(wanted)) return true;
    }
    if (!may_touch_stream) return false;
    if (events.capturing(stream)) return false;  // neither a query nor an event is allowed there
    stamped_since_mark_.store(false, std::memory_order_seq_cst);  // before the index: stamp_use()
    const std::uint64_t index = recorded_.fetch_add(1, std::memory_order_seq_cst) + 1;
    if (events.idle(stream)) {
      complete(index);
      return covers(wanted);
    }
    token_ = events.record(stream);
    token_index_ = index;
    in_flight_ = true;
    return false;
  }

  // For a free stamped `stamp` that poll() found unfinished: the mark in flight, when it covers
  // it, for another stream to be made to wait on.
  [[nodiscard]] bool in_flight() const noexcept { return in_flight_; }
  [[nodiscard]] bool in_flight_covers(std::uint64_t stamp) const noexcept { return in_flight_ && stamp <= token_index_; }
  [[nodiscard]] StreamEvents::Token in_flight_token() const noexcept { return token_; }

  // Drops the mark in flight, if any, without waiting for it (the allocator is going away).
  void release(StreamEvents& events) noexcept {
    if (in_flight_) events.release(token_);
    in_flight_ = false;
  }

 private:
  void complete(std::uint64_t index) noexcept {
    if (index > completed_.load(std::memory_order_relaxed)) completed_.store(index, std::memory_order_release);
  }
  std::atomic<std::uint64_t> recorded_{0};   // the last mark's index
  std::atomic<std::uint64_t> completed_{0};  // the last mark known complete
  std::atomic<bool> stamped_since_mark_{false};  // stamp_use() since the last mark took its index
  StreamEvents::Token token_ = 0;
  std::uint64_t token_index_ = 0;
  bool in_flight_ = false;
};

}  // namespace cudakit::memory::detail
