#pragma once
// @brief Detector: the stream sanitizer's model, fed the trace hooks' events one by one (the
// sanitizer attaches one as a listener; tests feed recorded or synthetic sequences) and answering
// with the hazards each event reveals. See Note [Stream sanitizer model].
//
//   cudakit::sanitizer::Detector d;
//   for (const TraceEvent& e : events)
//     for (const RaceReport& r : d.on_event(e)) std::cout << r.to_string();
//
// Not thread-safe: one caller at a time (the sanitizer serializes its listener).

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "cudakit/core/trace_event.hpp"
#include "cudakit/sanitizer/race_report.hpp"

namespace cudakit::sanitizer {

// How the detector captures the C++ stack of each operation it keeps (launches, copies, memsets,
// collectives, allocations, frees): return addresses only, each distinct stack stored once and
// named only when a report is made. See Note [Frame-pointer stacks] in core/stack_trace.cpp.
enum class StackCapture : std::uint8_t {
  off,             // reports say "no stack"
  frame_pointers,  // the frame-pointer chain (StackWalk::frame_pointers): a fraction of a
                   // microsecond an operation; the program's frames past its call into cudakit
                   // where it is built with -fno-omit-frame-pointer
  unwinder,        // the unwinder (StackWalk::unwinder): every frame whatever the build, about
                   // ten times the cost (notes/figures.md, "Stacks")
};
// CUDAKIT_SANITIZER_STACKS's values: "fp" (or empty) -> frame_pointers, "unwind" -> unwinder,
// "off" or "0" -> off.
// @param value the variable's value.
// @return the capture it names.
// @throws InvalidArgumentError naming the value and what it takes.
[[nodiscard]] StackCapture parse_stack_capture(std::string_view value);

// How a Detector records what it checks.
struct DetectorOptions {
  // Frame pointers by default: cheap enough for every operation (the unwinder would triple an
  // eager loop's time), and always reaching the program's call into cudakit.
  StackCapture stacks = StackCapture::frame_pointers;
  int stack_depth = 24;  // frames kept a stack, at most 64
  // Report reads of allocated memory that no tracked operation wrote. Memory written by raw CUDA
  // calls the hooks do not see reads as unwritten: turn this off for such programs.
  bool uninitialized_reads = true;
};

// What a Detector has seen so far.
struct DetectorStats {
  std::uint64_t operations = 0;          // launches, copies, memsets, collectives checked
  std::uint64_t unchecked_launches = 0;  // launches that declared no accesses
  std::uint64_t replayed_operations = 0; // operations of graph replays
  std::uint64_t hazards = 0;  // hazards reported
  std::size_t streams = 0;  // streams seen
  std::size_t shadow_ranges = 0;  // byte ranges tracked in the shadow memory
  std::size_t stacks = 0;               // distinct stacks kept
};

// The stream sanitizer's model: fed TraceEvents in the order they happened, it reports the hazards
// among them. Move-only. Not thread-safe: one caller at a time.
class Detector {
 public:
  // An empty model: no streams, no memory, no operations known.
  // @param options stack capture and what to report.
  explicit Detector(DetectorOptions options = {});
  // Frees the model.
  ~Detector();
  // Takes another detector's model; the source must not be used again but to be destroyed or
  // assigned.
  Detector(Detector&&) noexcept;
  // Takes another detector's model, dropping this one's.
  // @return this detector.
  Detector& operator=(Detector&&) noexcept;

  // Applies `event`; returns the hazards it reveals (each pair of operations reported once).
  // Events must come in the order the host issued the operations.
  // @param event the operation, as the trace hooks report it.
  // @return the hazards; empty when there are none.
  std::vector<RaceReport> on_event(const TraceEvent& event);

  // @return the counts so far.
  [[nodiscard]] DetectorStats stats() const;
  // The names of kernels launched without declared accesses, each once (static storage).
  // @return the names, in the order first seen.
  [[nodiscard]] std::vector<const char*> unchecked_kernels() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cudakit::sanitizer
