#pragma once
// @brief NvrtcError: the error family's member for runtime compilation (See Note [Error
// hierarchy] in core/error.hpp), owned by the layer that loads NVRTC.

#include <source_location>
#include <string>
#include <string_view>

#include "cudakit/core/error.hpp"

namespace cudakit {

// NVRTC refused a program (or failed). status() is the nvrtcResult; log() is NVRTC's log, whose
// line numbers are those of the code the program was made from (the generated part of a
// runtime-compiled kernel says so with #line), and source() the program that was compiled.
class NvrtcError : public detail::ErrorOf<std::runtime_error> {
 public:
  // The error for `nvrtc_result`, returned by `api`.
  // @param nvrtc_result the nvrtcResult, as an int (status() returns it)
  // @param api the call that failed ("nvrtcCompileProgram", ...)
  // @param detail more text for the message
  // @param log NVRTC's program log (may be empty)
  // @param source the program's source
  // @param location where the failing call was made
  NvrtcError(int nvrtc_result, std::string api, std::string_view detail, std::string log,
             std::string source,
             std::source_location location = std::source_location::current());
  // @return NVRTC's log: its errors and warnings, lines numbered as in the user's code.
  [[nodiscard]] const std::string& log() const noexcept { return log_; }
  // @return the complete source that was compiled.
  [[nodiscard]] const std::string& source() const noexcept { return source_; }

 private:
  std::string log_;
  std::string source_;
};

}  // namespace cudakit
