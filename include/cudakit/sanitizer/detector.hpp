#pragma once
// Detector: the stream sanitizer's model, fed the trace hooks' events one by one (the sanitizer
// attaches one as a listener; tests feed recorded or synthetic sequences) and answering with the
// hazards each event reveals. See Note [Stream sanitizer model].
//
//   cudakit::sanitizer::Detector d;
//   for (const TraceEvent& e : events)
//     for (const RaceReport& r : d.on_event(e)) std::cout << r.to_string();
//
// Not thread-safe: one caller at a time (the sanitizer serializes its listener).

#include <cstdint>
#include <memory>
#include <vector>

#include "cudakit/core/trace_event.hpp"
#include "cudakit/sanitizer/race_report.hpp"

namespace cudakit::sanitizer {

struct DetectorOptions {
  // Capture the C++ stack of every operation (return addresses, symbolized only for reports).
  bool stacks = true;
  int stack_depth = 24;
  // Report reads of allocated memory that no tracked operation wrote. Memory written by raw CUDA
  // calls the hooks do not see reads as unwritten: turn this off for such programs.
  bool uninitialized_reads = true;
};

struct DetectorStats {
  std::uint64_t operations = 0;          // launches, copies, memsets, collectives checked
  std::uint64_t unchecked_launches = 0;  // launches that declared no accesses
  std::uint64_t replayed_operations = 0; // operations of graph replays
  std::uint64_t hazards = 0;
  std::size_t streams = 0;
  std::size_t shadow_ranges = 0;
};

class Detector {
 public:
  explicit Detector(DetectorOptions options = {});
  ~Detector();
  Detector(Detector&&) noexcept;
  Detector& operator=(Detector&&) noexcept;

  // Applies `event`; returns the hazards it reveals (each pair of operations reported once).
  std::vector<RaceReport> on_event(const TraceEvent& event);

  [[nodiscard]] DetectorStats stats() const;
  // The names of kernels launched without declared accesses, each once (static storage).
  [[nodiscard]] std::vector<const char*> unchecked_kernels() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cudakit::sanitizer
