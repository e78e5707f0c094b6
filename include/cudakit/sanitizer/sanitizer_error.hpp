#pragma once
// @brief SanitizerError: the stream sanitizer (mode throw) refused an operation; the message is the
// report, report() the structured form.

#include <stdexcept>

#include "cudakit/core/error.hpp"
#include "cudakit/sanitizer/race_report.hpp"

namespace cudakit::sanitizer {

// The sanitizer in Mode::throw_error refused an operation: thrown from the call that would have
// queued it, before it was queued. status() is 0, api() is "sanitizer"; the message is the report's
// text.
class SanitizerError : public cudakit::detail::ErrorOf<std::runtime_error> {
 public:
  // @param report the hazard found.
  // @param location where the refused call was made (the caller's by default).
  explicit SanitizerError(RaceReport report, std::source_location location = std::source_location::current());
  // @return the hazard, in structured form.
  [[nodiscard]] const RaceReport& report() const noexcept { return report_; }

 private:
  RaceReport report_;
};

}  // namespace cudakit::sanitizer
