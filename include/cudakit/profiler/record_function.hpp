#pragma once
// @brief RecordFunction: a named range on the host timeline of every running Profiler, the C++
// form of `with torch.profiler.record_function("name"):`. Stamped with CuptiHub::timestamp(), the
// clock of CUPTI's activity records, so a range encloses the launches made inside it in the trace.
//
//   { auto range = cudakit::profiler::record_function("forward"); ... }
//
// A range begun while no Profiler runs records nothing and costs one atomic load. A range is
// added, when it ends, to every Profiler running at that moment.

#include <cstdint>
#include <string>

namespace cudakit::profiler {

// A named host range for the running Profilers, from construction to destruction. Not copyable or
// movable; make it with record_function() or directly, on the thread the range belongs to.
class RecordFunction {
 public:
  // Begins the range (when a Profiler runs). Host-side only: queues nothing.
  // @param name the range's name in the trace.
  explicit RecordFunction(std::string name);
  // Ends the range and adds it to every Profiler running now. Never throws (a range that cannot
  // be stored is dropped).
  ~RecordFunction();
  // Not copyable: a range ends once.
  RecordFunction(const RecordFunction&) = delete;
  // Not copyable: a range ends once.
  RecordFunction& operator=(const RecordFunction&) = delete;

 private:
  std::string name_;
  std::uint64_t start_ns_ = 0;
  bool active_ = false;  // a profiler ran when the range began
};

// Guaranteed copy elision makes this an RAII factory: `auto r = record_function("step");`.
// @param name the range's name in the trace.
// @return the range, which ends when the returned object is destroyed.
[[nodiscard]] inline RecordFunction record_function(std::string name) {
  return RecordFunction(std::move(name));
}

}  // namespace cudakit::profiler
