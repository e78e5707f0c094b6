#pragma once
// EventProgram: a program written as the trace hooks would report it — launches with their
// accesses, copies, allocations, frees, events, waits, synchronizations, captures and replays —
// for the sanitizer's detector on the host. Streams, events and buffers are fake handles (the
// detector only compares them); accesses are kept alive for the program's life.

#include <cuda_runtime_api.h>

#include <cstdint>
#include <deque>
#include <vector>

#include "cudakit/core/trace_event.hpp"
#include "cudakit/sanitizer/detector.hpp"

namespace cudakit::testing {

using cudakit::MemoryAccess;
using cudakit::TraceEvent;
using cudakit::TraceEventKind;

inline cudaStream_t stream(int i) { return reinterpret_cast<cudaStream_t>(std::uintptr_t{0x5000} + 16u * i); }
inline cudaEvent_t event(int i) { return reinterpret_cast<cudaEvent_t>(std::uintptr_t{0xe000} + 16u * i); }
// Buffer i: 1 MiB apart, so buffers never overlap unless a test slices one.
inline char* buffer(int i) { return reinterpret_cast<char*>(std::uintptr_t{0x7f0000000000} + (static_cast<std::uintptr_t>(i) << 20)); }

inline MemoryAccess rd(const void* p, std::size_t n, const char* arg = "in") {
  return {p, n, MemoryAccess::Mode::read, arg};
}
inline MemoryAccess wr(const void* p, std::size_t n, const char* arg = "out") {
  return {p, n, MemoryAccess::Mode::write, arg};
}
inline MemoryAccess rw(const void* p, std::size_t n, const char* arg = "inout") {
  return {p, n, MemoryAccess::Mode::read_write, arg};
}

class EventProgram {
 public:
  EventProgram& kernel(cudaStream_t s, std::vector<MemoryAccess> accesses, const char* name = "kernel") {
    const auto& kept = accesses_.emplace_back(std::move(accesses));
    events_.push_back({.kind = TraceEventKind::kernel_launch, .device = 0, .stream = s, .name = name,
                       .accesses = kept, .accesses_declared = true});
    return *this;
  }
  EventProgram& undeclared_kernel(cudaStream_t s, const char* name) {
    events_.push_back({.kind = TraceEventKind::kernel_launch, .device = 0, .stream = s, .name = name});
    return *this;
  }
  EventProgram& collective(cudaStream_t s, const void* send, void* recv, std::size_t n, const char* name = "nccl.all_reduce") {
    const auto& kept = accesses_.emplace_back(std::vector<MemoryAccess>{rd(send, n, "send"), wr(recv, n, "recv")});
    events_.push_back({.kind = TraceEventKind::collective, .device = 0, .stream = s, .name = name,
                       .accesses = kept, .accesses_declared = true});
    return *this;
  }
  EventProgram& copy(cudaStream_t s, void* dst, const void* src, std::size_t n) {
    events_.push_back({.kind = TraceEventKind::memcpy, .device = 0, .stream = s, .pointer = dst, .source = src,
                       .bytes = n, .copy_kind = cudaMemcpyDeviceToDevice});
    return *this;
  }
  EventProgram& fill(cudaStream_t s, void* p, std::size_t n) {
    events_.push_back({.kind = TraceEventKind::memset, .device = 0, .stream = s, .pointer = p, .bytes = n});
    return *this;
  }
  EventProgram& alloc(cudaStream_t s, void* p, std::size_t n) {
    events_.push_back({.kind = TraceEventKind::allocation, .device = 0, .stream = s, .pointer = p, .bytes = n});
    return *this;
  }
  EventProgram& free(void* p, std::size_t n) {
    events_.push_back({.kind = TraceEventKind::free, .device = 0, .pointer = p, .bytes = n});
    return *this;
  }
  EventProgram& record_stream(void* p, cudaStream_t s) {
    events_.push_back({.kind = TraceEventKind::record_stream, .device = 0, .other_stream = s, .pointer = p});
    return *this;
  }
  EventProgram& record(cudaEvent_t e, cudaStream_t s) {
    events_.push_back({.kind = TraceEventKind::event_record, .device = 0, .stream = s, .event = e});
    return *this;
  }
  EventProgram& wait(cudaStream_t s, cudaEvent_t e) {
    events_.push_back({.kind = TraceEventKind::event_wait, .device = 0, .stream = s, .event = e});
    return *this;
  }
  EventProgram& wait_stream(cudaStream_t waiter, cudaStream_t waited) {
    events_.push_back({.kind = TraceEventKind::stream_wait, .device = 0, .stream = waiter, .other_stream = waited});
    return *this;
  }
  EventProgram& sync_stream(cudaStream_t s) {
    events_.push_back({.kind = TraceEventKind::stream_synchronize, .device = 0, .stream = s});
    return *this;
  }
  EventProgram& sync_event(cudaEvent_t e) {
    events_.push_back({.kind = TraceEventKind::event_synchronize, .device = 0, .event = e});
    return *this;
  }
  EventProgram& sync_device(int device = 0) {
    events_.push_back({.kind = TraceEventKind::device_synchronize, .device = device});
    return *this;
  }
  EventProgram& destroy_event(cudaEvent_t e) {
    events_.push_back({.kind = TraceEventKind::event_destroy, .device = 0, .event = e});
    return *this;
  }
  EventProgram& capture_begin(cudaStream_t s, std::uintptr_t graph) {
    events_.push_back({.kind = TraceEventKind::capture_begin, .device = 0, .stream = s, .graph = graph});
    return *this;
  }
  EventProgram& capture_end(cudaStream_t s, std::uintptr_t graph) {
    events_.push_back({.kind = TraceEventKind::capture_end, .device = 0, .stream = s, .graph = graph});
    return *this;
  }
  EventProgram& replay(std::uintptr_t graph, cudaStream_t s) {
    events_.push_back({.kind = TraceEventKind::graph_launch, .device = 0, .stream = s, .graph = graph});
    return *this;
  }

  // Feeds every event to `detector`, in order; returns all reports.
  [[gnu::noinline]] std::vector<sanitizer::RaceReport> run(sanitizer::Detector& detector) const {
    std::vector<sanitizer::RaceReport> all;
    for (const TraceEvent& e : events_) {
      for (auto& r : detector.on_event(e)) all.push_back(std::move(r));
    }
    return all;
  }
  std::vector<sanitizer::RaceReport> run(sanitizer::DetectorOptions options = {.stacks = cudakit::sanitizer::StackCapture::off}) const {
    sanitizer::Detector detector(options);
    return run(detector);
  }
  [[nodiscard]] const std::vector<TraceEvent>& events() const { return events_; }

 private:
  std::vector<TraceEvent> events_;
  std::deque<std::vector<MemoryAccess>> accesses_;
};

}  // namespace cudakit::testing
