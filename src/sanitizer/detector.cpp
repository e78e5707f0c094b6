#include "cudakit/sanitizer/detector.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "cudakit/core/stack_trace.hpp"
#include "cudakit/core/error.hpp"
#include "sanitizer/detail/shadow_memory.hpp"
#include "sanitizer/detail/stack_table.hpp"
#include "sanitizer/detail/vector_clock.hpp"

namespace cudakit::sanitizer {

// Note [Stream sanitizer model]
// Streams: each stream the hooks name gets an index and a vector clock (detail::VectorClock):
// entry i is how far stream i's operations are known to be complete before the stream's next
// operation. Issuing an operation on stream s advances entry s; the operation is (s, clock).
// Happens-before comes from:
//  - event_record(e, s): e takes s's clock; event_wait(e, t) / stream_wait(t, s): t's clock
//    takes the maximum of its own and e's (s's);
//  - host synchronization (stream_synchronize, event_synchronize, device_synchronize): the
//    host's clock takes the stream's (event's, device's streams'); every stream merges the host's
//    clock before its next operation (lazily: an epoch says when there is something new), since
//    the host issues it after the wait returned. One host clock for all threads: a program that
//    synchronizes on one thread and issues on another is taken to order the two (a race between
//    host threads is beyond a stream sanitizer).
// An access (s, c) is ordered before stream t's next operation when t's clock has entry s >= c.
// Memory: an interval map of byte ranges (detail::ShadowMemory), each with its last write and the
// reads since it, one per stream (a later read on a stream subsumes an earlier one for ordering).
// Ranges, not pointers: a view, a slice and an overlapping slice touch exactly their bytes.
// Hazards: a read not ordered after the range's write (RAW), a write not ordered after its reads
// (WAR) or its write (WAW), on another stream. Same-stream accesses are ordered by the stream.
// The allocator: an allocation marks its block written by nobody (a read then is an
// uninitialized read); a free is an operation on the block's stream after which the allocator
// may hand the block out again, so every access of another stream must be ordered before it
// unless record_stream named that stream (the allocator then waits for it itself, so a correct
// record_stream is never reported); the block reads as freed until allocated again. Reuse is
// therefore checked at the free, the moment the allocator takes the block back.
// Library streams: a collective (NCCL) or a cuBLAS call is one operation on the stream it is
// issued to, with its buffers as accesses; whatever streams the library uses inside are joined
// back into that stream by the library, so they are not modelled.
// Graphs: operations issued on a capturing stream (and on streams that join the capture through
// an event or stream wait) are recorded, not applied; blocks allocated during a capture belong to
// the graph's private pool, so their frees are not checked; each graph_launch on stream t replays them
// in capture order, the capture's stream mapped to t and each other captured stream to a stream
// of the graph's own, so the graph's inner ordering (its events) and its ordering against t's
// work are both checked at every replay.
// Stacks: each operation's C++ stack is captured once (frame pointers by default, See Note
// [Frame-pointer stacks] in core/stack_trace.cpp), interned in a StackTable (an operation holds a
// 32-bit id) and symbolized only when a report names the operation.

namespace {

using detail::Access;
using detail::Operation;
using detail::OperationPtr;
using detail::Segment;
using detail::SegmentState;
using detail::ShadowMemory;
using detail::StackTable;
using detail::VectorClock;

// Frames of the hooks' and the sanitizer's own dispatch, in every stack: left out of reports.
constexpr std::string_view kHiddenFrames[] = {"cudakit::sanitizer::", "cudakit::detail::emit_trace_event",
                                              "cudakit::detail::ListenerSet", "cudakit::detail::trace_launch",
                                              "std::"};

struct StreamState {
  cudaStream_t handle = nullptr;
  int device = -1;
  VectorClock clock;
  std::uint64_t host_epoch = 0;  // the host epoch last merged
  int capture = -1;              // the capture recording this stream's operations
};

struct Allocation {
  std::uintptr_t end = 0;
  std::uint32_t stream = 0;
  OperationPtr op;
  std::vector<std::uint32_t> recorded_streams;  // record_stream
  bool freed = false;
  // Allocated while its stream captured: the graph's private pool keeps the block for the
  // replays, whatever the program frees.
  bool graph_owned = false;
};

// One operation as a capture records it, replayed at each graph_launch.
struct RecordedOp {
  TraceEventKind kind;
  std::uint32_t stream = 0;
  std::uint32_t other_stream = 0;
  cudaEvent_t event = nullptr;
  const char* name = nullptr;
  std::vector<MemoryAccess> accesses;
  std::uint32_t stack = StackTable::kNoStack;
};

struct Capture {
  std::uint32_t origin = 0;
  std::vector<std::uint32_t> members;
  std::vector<RecordedOp> ops;
};

struct RecordedGraph {
  std::uint32_t origin = 0;
  std::vector<RecordedOp> ops;
  std::unordered_map<std::uint32_t, std::uint32_t> own_streams;  // captured stream -> graph's own
};

// A stream's identity: its handle, except for the per-device default streams (0, legacy,
// per-thread), which are told apart by device.
std::uintptr_t stream_key(cudaStream_t stream, int device) {
  const auto value = reinterpret_cast<std::uintptr_t>(stream);
  if (value > 2) return value;
  return (static_cast<std::uintptr_t>(device + 1) << 2) | value;
}

}  // namespace

class Detector::Impl {
 public:
  explicit Impl(DetectorOptions options) : options_(options) {}

  std::vector<RaceReport> on_event(const TraceEvent& e);
  DetectorStats stats() const {
    DetectorStats s = stats_;
    s.streams = streams_.size();
    s.shadow_ranges = shadow_.size();
    s.stacks = stacks_.size();
    return s;
  }
  std::vector<const char*> unchecked_kernels() const { return {unchecked_.begin(), unchecked_.end()}; }

 private:
  std::uint32_t stream_index(cudaStream_t stream, int device);
  std::uint32_t new_stream(cudaStream_t handle, int device);
  VectorClock& view(std::uint32_t s);
  bool ordered_before(const Access& a, std::uint32_t t) {
    if (a.stream == t) return true;
    const VectorClock& vc = view(t);
    return vc.covers(a.stream, a.clock);
  }
  void host_merge(const VectorClock& vc) {
    host_.merge(vc);
    ++host_epoch_;
  }
  OperationPtr make_operation(TraceEventKind kind, const char* name, std::uint32_t s, std::uint32_t stack);
  std::uint32_t capture_frames();

  // The operations that touch memory, applied now or recorded by a capture.
  void issue(const TraceEvent& e, std::uint32_t s, std::span<const MemoryAccess> accesses, std::uint32_t stack);
  void apply(TraceEventKind kind, const char* name, std::uint32_t s, std::span<const MemoryAccess> accesses,
             std::uint32_t stack);
  void check_access(const Access& a);
  void on_allocation(const TraceEvent& e);
  void on_free(const TraceEvent& e);
  void on_record_stream(const TraceEvent& e);
  void record_event(cudaEvent_t event, std::uint32_t s);
  void wait_event(cudaEvent_t event, std::uint32_t t);
  void wait_stream(std::uint32_t t, std::uint32_t s);
  void replay(std::uintptr_t graph, std::uint32_t t);
  bool recording(std::uint32_t s) const { return streams_[s].capture >= 0; }
  void join_capture(std::uint32_t s, int capture);

  void report(HazardKind kind, const Access& current, const Access* previous, std::uintptr_t begin, std::uintptr_t end);
  AccessInfo info(const Access& a) const;

  DetectorOptions options_;
  DetectorStats stats_;
  const std::chrono::steady_clock::time_point epoch_ = std::chrono::steady_clock::now();
  std::uint64_t next_op_ = 1;
  std::vector<StreamState> streams_;
  std::unordered_map<std::uintptr_t, std::uint32_t> stream_of_key_;
  VectorClock host_;
  std::uint64_t host_epoch_ = 1;
  std::unordered_map<cudaEvent_t, VectorClock> events_;
  std::unordered_map<cudaEvent_t, int> event_capture_;  // events recorded by a capturing stream
  std::map<std::uintptr_t, Allocation> allocations_;    // by begin
  ShadowMemory shadow_;
  std::vector<Capture> captures_;  // in progress, by index; finished ones are emptied
  std::unordered_map<std::uintptr_t, int> capture_of_graph_;
  std::unordered_map<std::uintptr_t, RecordedGraph> graphs_;
  std::unordered_set<const char*> unchecked_;
  StackTable stacks_;
  std::vector<RaceReport> found_;  // the current event's
};

std::uint32_t Detector::Impl::new_stream(cudaStream_t handle, int device) {
  const auto index = static_cast<std::uint32_t>(streams_.size());
  streams_.push_back({.handle = handle, .device = device});
  return index;
}

std::uint32_t Detector::Impl::stream_index(cudaStream_t stream, int device) {
  const auto [it, inserted] = stream_of_key_.try_emplace(stream_key(stream, device), 0);
  if (inserted) it->second = new_stream(stream, device);
  return it->second;
}

VectorClock& Detector::Impl::view(std::uint32_t s) {
  StreamState& st = streams_[s];
  if (st.host_epoch != host_epoch_) {
    st.clock.merge(host_);
    st.host_epoch = host_epoch_;
  }
  return st.clock;
}

// Not inlined: the frames it skips are its own caller's (the rest of the sanitizer's are hidden by
// name in reports).
[[gnu::noinline]] std::uint32_t Detector::Impl::capture_frames() {
  if (options_.stacks == StackCapture::off) return StackTable::kNoStack;
  void* frames[64];
  const auto depth = static_cast<std::size_t>(std::clamp(options_.stack_depth, 0, 64));
  const std::size_t n = cudakit::capture_return_addresses(
      std::span(frames, depth), 1,
      options_.stacks == StackCapture::unwinder ? StackWalk::unwinder : StackWalk::frame_pointers);
  return stacks_.intern(std::span<void* const>(frames, n));
}

OperationPtr Detector::Impl::make_operation(TraceEventKind kind, const char* name, std::uint32_t s,
                                            std::uint32_t stack) {
  const auto ns = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - epoch_).count());
  return std::make_shared<const Operation>(
      Operation{next_op_++, kind, name, streams_[s].handle, ns, stack});
}

std::vector<RaceReport> Detector::Impl::on_event(const TraceEvent& e) {
  found_.clear();
  switch (e.kind) {
    case TraceEventKind::kernel_launch:
      if (!e.accesses_declared) {
        ++stats_.unchecked_launches;
        if (e.name) unchecked_.insert(e.name);
      }
      issue(e, stream_index(e.stream, e.device), e.accesses, capture_frames());
      break;
    case TraceEventKind::collective:
      issue(e, stream_index(e.stream, e.device), e.accesses, capture_frames());
      break;
    case TraceEventKind::memcpy: {
      const MemoryAccess both[] = {{e.source, e.bytes, MemoryAccess::Mode::read, "source"},
                                   {e.pointer, e.bytes, MemoryAccess::Mode::write, "destination"}};
      issue(e, stream_index(e.stream, e.device), both, capture_frames());
      break;
    }
    case TraceEventKind::memset: {
      const MemoryAccess target[] = {{e.pointer, e.bytes, MemoryAccess::Mode::write, "destination"}};
      issue(e, stream_index(e.stream, e.device), target, capture_frames());
      break;
    }
    case TraceEventKind::allocation: on_allocation(e); break;
    case TraceEventKind::free: on_free(e); break;
    case TraceEventKind::record_stream: on_record_stream(e); break;
    case TraceEventKind::event_record: record_event(e.event, stream_index(e.stream, e.device)); break;
    case TraceEventKind::event_wait: wait_event(e.event, stream_index(e.stream, e.device)); break;
    case TraceEventKind::stream_wait:
      wait_stream(stream_index(e.stream, e.device), stream_index(e.other_stream, e.device));
      break;
    case TraceEventKind::event_synchronize:
      if (const auto it = events_.find(e.event); it != events_.end()) host_merge(it->second);
      break;
    case TraceEventKind::stream_synchronize: host_merge(view(stream_index(e.stream, e.device))); break;
    case TraceEventKind::device_synchronize:
      for (std::uint32_t s = 0; s < streams_.size(); ++s) {
        if (e.device < 0 || streams_[s].device < 0 || streams_[s].device == e.device) host_.merge(view(s));
      }
      ++host_epoch_;
      break;
    case TraceEventKind::event_destroy:
      events_.erase(e.event);
      event_capture_.erase(e.event);
      break;
    case TraceEventKind::capture_begin: {
      const std::uint32_t s = stream_index(e.stream, e.device);
      const int c = static_cast<int>(captures_.size());
      captures_.push_back({.origin = s});
      capture_of_graph_[e.graph] = c;
      join_capture(s, c);
      break;
    }
    case TraceEventKind::capture_end: {
      const auto it = capture_of_graph_.find(e.graph);
      if (it == capture_of_graph_.end()) break;
      Capture& c = captures_[static_cast<std::size_t>(it->second)];
      for (const std::uint32_t m : c.members) streams_[m].capture = -1;
      std::erase_if(event_capture_, [&](const auto& ec) { return ec.second == it->second; });
      RecordedGraph& g = graphs_[e.graph];  // a capture again replaces what the graph held
      g = RecordedGraph{.origin = c.origin, .ops = std::move(c.ops)};
      c = Capture{};
      capture_of_graph_.erase(it);
      break;
    }
    case TraceEventKind::graph_launch: replay(e.graph, stream_index(e.stream, e.device)); break;
    default: break;  // creations, destructions of streams, NVTX ranges: nothing to model
  }
  stats_.hazards += found_.size();
  return std::move(found_);
}

void Detector::Impl::join_capture(std::uint32_t s, int capture) {
  if (streams_[s].capture == capture) return;
  streams_[s].capture = capture;
  captures_[static_cast<std::size_t>(capture)].members.push_back(s);
}

void Detector::Impl::issue(const TraceEvent& e, std::uint32_t s, std::span<const MemoryAccess> accesses,
                           std::uint32_t stack) {
  if (recording(s)) {
    captures_[static_cast<std::size_t>(streams_[s].capture)].ops.push_back(
        {.kind = e.kind, .stream = s, .name = e.name, .accesses = {accesses.begin(), accesses.end()},
         .stack = stack});
    return;
  }
  apply(e.kind, e.name, s, accesses, stack);
}

void Detector::Impl::apply(TraceEventKind kind, const char* name, std::uint32_t s,
                           std::span<const MemoryAccess> accesses, std::uint32_t stack) {
  ++stats_.operations;
  VectorClock& clock = view(s);
  const std::uint64_t c = clock.advance(s);
  const OperationPtr op = make_operation(kind, name, s, stack);
  for (const MemoryAccess& m : accesses) {
    if (m.bytes == 0 || m.begin == nullptr) continue;
    check_access({.stream = s, .clock = c, .op = op, .begin = reinterpret_cast<std::uintptr_t>(m.begin),
                  .bytes = m.bytes, .argument = m.argument, .mode = m.mode});
  }
}

void Detector::Impl::check_access(const Access& a) {
  const std::uintptr_t end = a.begin + a.bytes;
  const bool reads = a.mode != MemoryAccess::Mode::write;
  const bool writes = a.mode != MemoryAccess::Mode::read;
  shadow_.for_each(a.begin, end, [&](std::uintptr_t b, Segment& seg) {
    if (seg.state == SegmentState::freed) {
      report(HazardKind::use_after_free, a, seg.write ? &*seg.write : nullptr, b, seg.end);
      seg.state = SegmentState::untracked;  // reported once; tracked as plain memory from here
      seg.write.reset();
    }
    if (reads) {
      if (seg.write) {
        if (!ordered_before(*seg.write, a.stream)) report(HazardKind::read_after_write, a, &*seg.write, b, seg.end);
      } else if (seg.state == SegmentState::allocated && options_.uninitialized_reads && !writes) {
        report(HazardKind::uninitialized_read, a, nullptr, b, seg.end);
      }
    }
    if (writes) {
      if (seg.write && !ordered_before(*seg.write, a.stream)) {
        report(HazardKind::write_after_write, a, &*seg.write, b, seg.end);
      }
      for (const Access& r : seg.reads) {
        if (!ordered_before(r, a.stream)) report(HazardKind::write_after_read, a, &r, b, seg.end);
      }
      seg.write = a;
      seg.reads.clear();
    } else {
      seg.add_read(a);
    }
  });
  if (writes) shadow_.coalesce(a.begin, end);
}

void Detector::Impl::on_allocation(const TraceEvent& e) {
  if (!e.pointer || e.bytes == 0) return;
  const std::uint32_t s = stream_index(e.stream, e.device);
  const auto begin = reinterpret_cast<std::uintptr_t>(e.pointer);
  const std::uintptr_t end = begin + e.bytes;
  // Blocks the allocator handed out before over these bytes are gone.
  auto it = allocations_.lower_bound(begin);
  if (it != allocations_.begin() && std::prev(it)->second.end > begin) --it;
  while (it != allocations_.end() && it->first < end) it = allocations_.erase(it);
  OperationPtr op = make_operation(TraceEventKind::allocation, nullptr, s, capture_frames());
  allocations_.emplace(begin, Allocation{.end = end, .stream = s, .op = op, .graph_owned = recording(s)});
  shadow_.reset(begin, end, SegmentState::allocated, std::nullopt);
}

void Detector::Impl::on_free(const TraceEvent& e) {
  const auto begin = reinterpret_cast<std::uintptr_t>(e.pointer);
  const auto it = allocations_.find(begin);
  if (it == allocations_.end() || it->second.freed) return;  // not a block the detector saw
  Allocation& block = it->second;
  const std::uint32_t s = block.stream;
  // A block of a graph's private pool stays with the graph (its replays still use it).
  if (block.graph_owned) return;
  VectorClock& clock = view(s);
  const std::uint64_t c = clock.advance(s);
  const Access free_access{.stream = s, .clock = c,
                           .op = make_operation(TraceEventKind::free, nullptr, s, capture_frames()),
                           .begin = begin, .bytes = block.end - begin, .mode = MemoryAccess::Mode::write};
  const auto recorded = [&](std::uint32_t stream) {
    return std::find(block.recorded_streams.begin(), block.recorded_streams.end(), stream) !=
           block.recorded_streams.end();
  };
  shadow_.for_each_existing(begin, block.end, [&](std::uintptr_t b, Segment& seg) {
    const auto check = [&](const Access& use) {
      if (!recorded(use.stream) && !ordered_before(use, s)) {
        report(HazardKind::free_while_in_use, free_access, &use, b, seg.end);
      }
    };
    if (seg.write) check(*seg.write);
    for (const Access& r : seg.reads) check(r);
  });
  block.freed = true;
  shadow_.reset(begin, block.end, SegmentState::freed, free_access);
}

void Detector::Impl::on_record_stream(const TraceEvent& e) {
  const auto p = reinterpret_cast<std::uintptr_t>(e.pointer);
  auto it = allocations_.upper_bound(p);
  if (it == allocations_.begin()) return;
  --it;
  if (p >= it->second.end || it->second.freed) return;
  const std::uint32_t other = stream_index(e.other_stream, e.device);
  auto& recorded = it->second.recorded_streams;
  if (std::find(recorded.begin(), recorded.end(), other) == recorded.end()) recorded.push_back(other);
}

void Detector::Impl::record_event(cudaEvent_t event, std::uint32_t s) {
  if (recording(s)) {
    const int c = streams_[s].capture;
    captures_[static_cast<std::size_t>(c)].ops.push_back({.kind = TraceEventKind::event_record, .stream = s, .event = event});
    event_capture_[event] = c;
    return;
  }
  event_capture_.erase(event);
  events_[event] = view(s);
}

void Detector::Impl::wait_event(cudaEvent_t event, std::uint32_t t) {
  if (const auto c = event_capture_.find(event); c != event_capture_.end()) {
    join_capture(t, c->second);  // waiting on a captured event pulls t into the capture
  }
  if (recording(t)) {
    captures_[static_cast<std::size_t>(streams_[t].capture)].ops.push_back(
        {.kind = TraceEventKind::event_wait, .stream = t, .event = event});
    return;
  }
  // An event never recorded: the wait completes at once (as CUDA's does).
  if (const auto it = events_.find(event); it != events_.end()) view(t).merge(it->second);
}

void Detector::Impl::wait_stream(std::uint32_t t, std::uint32_t s) {
  if (recording(s)) join_capture(t, streams_[s].capture);
  if (recording(t)) {
    captures_[static_cast<std::size_t>(streams_[t].capture)].ops.push_back(
        {.kind = TraceEventKind::stream_wait, .stream = t, .other_stream = s});
    return;
  }
  const VectorClock waited = view(s);  // a copy: view(t) may grow streams_' clocks
  view(t).merge(waited);
}

void Detector::Impl::replay(std::uintptr_t graph, std::uint32_t t) {
  const auto it = graphs_.find(graph);
  if (it == graphs_.end()) return;  // a graph captured before the detector started
  RecordedGraph& g = it->second;
  const auto map = [&](std::uint32_t captured) {
    if (captured == g.origin) return t;
    const auto [own, inserted] = g.own_streams.try_emplace(captured, 0);
    if (inserted) own->second = new_stream(streams_[captured].handle, streams_[captured].device);
    return own->second;
  };
  for (const RecordedOp& op : g.ops) {
    const std::uint32_t s = map(op.stream);
    switch (op.kind) {
      case TraceEventKind::event_record: events_[op.event] = view(s); break;
      case TraceEventKind::event_wait:
        if (const auto e = events_.find(op.event); e != events_.end()) view(s).merge(e->second);
        break;
      case TraceEventKind::stream_wait: {
        const VectorClock waited = view(map(op.other_stream));
        view(s).merge(waited);
        break;
      }
      default:
        ++stats_.replayed_operations;
        apply(op.kind, op.name, s, op.accesses, op.stack);
        break;
    }
  }
}

AccessInfo Detector::Impl::info(const Access& a) const {
  AccessInfo i{.operation_id = a.op->id, .kind = a.op->kind, .name = a.op->name ? a.op->name : "",
               .stream = a.op->stream, .argument = a.argument ? a.argument : "", .begin = a.begin,
               .bytes = a.bytes, .mode = a.mode, .time_ns = a.op->time_ns};
  if (a.op->stack != StackTable::kNoStack) i.stack = cudakit::symbolize_stack(stacks_.frames(a.op->stack), kHiddenFrames);
  return i;
}

void Detector::Impl::report(HazardKind kind, const Access& current, const Access* previous, std::uintptr_t begin,
                            std::uintptr_t end) {
  const std::uint64_t previous_id = previous ? previous->op->id : 0;
  for (RaceReport& r : found_) {
    // The same pair of operations (over more segments, or another hazard of the same pair):
    // one report, its overlap widened.
    if (r.current.operation_id == current.op->id && (r.previous ? r.previous->operation_id : 0) == previous_id &&
        (r.kind == kind || previous_id != 0)) {
      const std::uintptr_t lo = std::min(r.overlap_begin, begin);
      const std::uintptr_t hi = std::max(r.overlap_begin + r.overlap_bytes, end);
      r.overlap_begin = lo;
      r.overlap_bytes = hi - lo;
      return;
    }
  }
  RaceReport r{.kind = kind, .current = info(current), .overlap_begin = begin, .overlap_bytes = end - begin};
  if (previous) r.previous = info(*previous);
  auto block = allocations_.upper_bound(begin);
  if (block != allocations_.begin()) {
    --block;
    if (begin < block->second.end) {
      const Allocation& a = block->second;
      AllocationInfo alloc{.begin = block->first, .bytes = a.end - block->first, .stream = streams_[a.stream].handle,
                           .operation_id = a.op->id, .time_ns = a.op->time_ns};
      if (a.op->stack != StackTable::kNoStack) {
        alloc.stack = cudakit::symbolize_stack(stacks_.frames(a.op->stack), kHiddenFrames);
      }
      r.allocation = std::move(alloc);
    }
  }
  found_.push_back(std::move(r));
}

StackCapture parse_stack_capture(std::string_view value) {
  if (value.empty() || value == "fp") return StackCapture::frame_pointers;
  if (value == "unwind") return StackCapture::unwinder;
  if (value == "off" || value == "0") return StackCapture::off;
  throw InvalidArgumentError("CUDAKIT_SANITIZER_STACKS", "'" + std::string(value) +
                                                             "' is not a way to capture stacks: use fp, unwind or off");
}

Detector::Detector(DetectorOptions options) : impl_(std::make_unique<Impl>(options)) {}
Detector::~Detector() = default;
Detector::Detector(Detector&&) noexcept = default;
Detector& Detector::operator=(Detector&&) noexcept = default;
std::vector<RaceReport> Detector::on_event(const TraceEvent& event) { return impl_->on_event(event); }
DetectorStats Detector::stats() const { return impl_->stats(); }
std::vector<const char*> Detector::unchecked_kernels() const { return impl_->unchecked_kernels(); }

}  // namespace cudakit::sanitizer
