#pragma once
// @brief SanitizerError: the stream sanitizer (mode throw) refused an operation; the message is the
// report, report() the structured form.

#include <stdexcept>

#include "cudakit/core/error.hpp"
#include "cudakit/sanitizer/race_report.hpp"

namespace cudakit::sanitizer {

class SanitizerError : public cudakit::detail::ErrorOf<std::runtime_error> {
 public:
  explicit SanitizerError(RaceReport report, std::source_location location = std::source_location::current());
  [[nodiscard]] const RaceReport& report() const noexcept { return report_; }

 private:
  RaceReport report_;
};

}  // namespace cudakit::sanitizer
