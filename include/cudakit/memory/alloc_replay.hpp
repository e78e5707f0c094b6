#pragma once
// @brief Replays an allocation trace against any allocator with alloc/free/empty_cache/reset_peaks/
// peak_allocated/peak_reserved/device_allocations (see bench/support/alloc_workloads.hpp), so
// `cudakit alloc-replay` and the side-by-side benchmarks time exactly the same loop: a whole
// AllocTrace in memory, or one streamed by an AllocTraceReader a batch at a time.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "cudakit/memory/alloc_trace.hpp"

namespace cudakit::memory {

// What one replay measured.
struct ReplayResult {
  double ns_per_op = 0;  // wall-clock nanoseconds per operation of the timed loop
  std::size_t peak_allocated = 0;  // the allocator's peak allocated bytes during the replay
  std::size_t peak_reserved = 0;  // its peak reserved bytes during the replay
  std::size_t device_allocations = 0;  // memory obtained from the device (or provider) during the replay
  std::uint64_t ops = 0;  // operations replayed
};

// Called after each operation of a replay with its index; the default does nothing and compiles
// away, so the timed loop is the same loop whether or not someone watches it.
struct NoReplayObserver {
  // Does nothing.
  void operator()(std::size_t /*op_index*/) const {}
};

namespace detail {

// The timed loop over `ops` (operation `first` onward of the trace); `live` holds each slot's
// pointer. Returns the nanoseconds it took. On an exception, `*failed` is the index in `ops` of
// the operation that threw.
template <class Allocator, class StreamAt, class Observer>
double replay_ops(Allocator& a, std::span<const AllocTraceOp> ops, std::vector<void*>& live,
                  StreamAt& stream_at, Observer& observe, std::size_t first, std::size_t* failed) {
  std::size_t i = 0;
  const auto start = std::chrono::steady_clock::now();
  try {
    for (; i < ops.size(); ++i) {
      const AllocTraceOp& op = ops[i];
      if (op.slot >= live.size()) live.resize(static_cast<std::size_t>(op.slot) + 1, nullptr);
      if (op.is_alloc) {
        live[op.slot] = a.alloc(op.size, stream_at(op.stream));
      } else {
        a.free(live[op.slot], stream_at(op.stream));
        live[op.slot] = nullptr;
      }
      observe(first + i);
    }
  } catch (...) {
    *failed = i;
    throw;
  }
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
}

// Frees what a replay left live (at its end, or when it failed) and empties the cache, so that
// the allocator is destroyed with nothing live and warns of nothing.
template <class Allocator, class Stream>
void release_live(Allocator& a, std::vector<void*>& live, const Stream& stream) noexcept {
  for (void*& p : live) {
    if (p != nullptr) {
      try {
        a.free(p, stream);
      } catch (...) {  // a free that fails while another error is told is not worth a second
      }
      p = nullptr;
    }
  }
  try {
    a.empty_cache();
  } catch (...) {
  }
}

template <class Allocator>
void start_replay(Allocator& a) {
  a.empty_cache();
  a.reset_peaks();
}

template <class Allocator>
ReplayResult finish_replay(Allocator& a, double ns, std::uint64_t ops, std::size_t before) {
  ReplayResult r;
  r.ops = ops;
  r.ns_per_op = ns / static_cast<double>(ops == 0 ? 1 : ops);
  r.peak_allocated = a.peak_allocated();
  r.peak_reserved = a.peak_reserved();
  r.device_allocations = a.device_allocations() - before;
  return r;
}

}  // namespace detail

// From an empty cache; trace stream i runs on streams[i % streams.size()]. Frees whatever the
// trace leaves live (also when an operation throws), then empties the cache again. `observe(i)`
// runs after operation i (the benchmarks' memory-over-time plots sample the allocator's
// statistics there, in an untimed pass).
//
// Runs on the calling thread; what the allocator does with the streams (stream ordering,
// synchronization in empty_cache) is its own.
// @tparam Allocator an allocator with the interface above (e.g. CachingAllocatorReplayTarget).
// @tparam Stream what the allocator takes as a stream.
// @tparam Observer a callable taking the operation's index.
// @param a the allocator; its cache is emptied and its peaks reset first.
// @param trace the trace, in memory.
// @param streams the streams trace streams map to, round robin (at least one).
// @param observe called after each operation.
// @return the timing and the allocator's peaks over the replay.
// @throws any exception of the allocator (OutOfMemoryError among them), after freeing what is live.
template <class Allocator, class Stream, class Observer = NoReplayObserver>
ReplayResult replay_alloc_trace(Allocator& a, const AllocTrace& trace, const std::vector<Stream>& streams,
                                Observer observe = {}) {
  std::vector<void*> live(trace.num_ids, nullptr);
  auto stream_at = [&](std::uint32_t stream) -> const Stream& { return streams[stream % streams.size()]; };
  detail::start_replay(a);
  const std::size_t before = a.device_allocations();
  std::size_t failed = 0;
  double ns = 0;
  try {
    ns = detail::replay_ops(a, std::span<const AllocTraceOp>(trace.ops), live, stream_at, observe, 0, &failed);
  } catch (...) {
    detail::release_live(a, live, streams[0]);
    throw;
  }
  ReplayResult r = detail::finish_replay(a, ns, trace.ops.size(), before);
  detail::release_live(a, live, streams[0]);
  return r;
}

// The same for a trace read as it is replayed, `batch` operations at a time (the reading is not
// timed), in memory bounded by the batch and the allocations live at once. Trace stream i runs on
// stream_for(i), which is asked for each stream as it appears. When an operation throws, the
// trace's line of it is in `*failed_line` (where given), what is live is freed, and the
// exception goes on.
// @tparam Allocator an allocator with the interface above.
// @tparam StreamFor a callable giving the allocator's stream for a trace stream index.
// @param a the allocator; its cache is emptied and its peaks reset first.
// @param reader the trace, read from where it stands.
// @param stream_for gives the stream of each trace stream index.
// @param failed_line where to store the trace line of the operation that threw (0 when the
// reader threw); may be null.
// @param batch operations read at a time (> 0).
// @return the timing (of the allocator's calls only) and the allocator's peaks over the replay.
// @throws InvalidArgumentError from the reader, for a malformed trace.
// @throws FileError from the reader, for a trace that cannot be read.
// @throws OutOfMemoryError from the allocator (as any other exception of it), after freeing
// what is live.
template <class Allocator, class StreamFor>
ReplayResult replay_alloc_trace(Allocator& a, AllocTraceReader& reader, StreamFor stream_for,
                                std::uint64_t* failed_line = nullptr, std::size_t batch = 1 << 16) {
  std::vector<void*> live;
  std::vector<AllocTraceOp> ops;
  NoReplayObserver observe;
  detail::start_replay(a);
  const std::size_t before = a.device_allocations();
  double ns = 0;
  std::size_t done = 0;
  std::size_t failed = SIZE_MAX;  // set only when the allocator threw, not the reader
  try {
    while (reader.read(ops, batch)) {
      ns += detail::replay_ops(a, std::span<const AllocTraceOp>(ops), live, stream_for, observe, done, &failed);
      done += ops.size();
    }
  } catch (...) {
    if (failed_line != nullptr) *failed_line = failed < ops.size() ? reader.line_of(failed) : 0;
    if (reader.num_streams() > 0) detail::release_live(a, live, stream_for(0));
    throw;
  }
  ReplayResult r = detail::finish_replay(a, ns, done, before);
  if (reader.num_streams() > 0) detail::release_live(a, live, stream_for(0));
  return r;
}

}  // namespace cudakit::memory
