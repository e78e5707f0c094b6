#pragma once
// @brief NVML's errors in cudakit's error family (See Note [Error hierarchy]).

#include <source_location>
#include <stdexcept>
#include <string>
#include <string_view>

#include "cudakit/core/error.hpp"

namespace cudakit {

// An NVML call failed. status() is the nvmlReturn_t (NVML_ERROR_NOT_SUPPORTED = 3,
// NVML_ERROR_NO_PERMISSION = 4, NVML_ERROR_GPU_IS_LOST = 15, ...), and the message names the call
// and NVML's words for the status.
class NvmlError : public detail::ErrorOf<std::runtime_error> {
 public:
  // @param nvml_return the failing call's nvmlReturn_t.
  // @param api the NVML function, e.g. "nvmlDeviceGetPowerUsage".
  // @param detail more context for the message (the device, what was asked).
  // @param location where the call was made (the caller's by default).
  NvmlError(int nvml_return, std::string api, std::string_view detail,
            std::source_location location = std::source_location::current());
};

// NVML cannot be used in this process: libnvidia-ml is not there (it comes with the driver, so a
// machine without one has none), lacks entry points cudakit needs, or nvmlInit_v2 failed (no
// driver loaded). The message reads "NVML is not available: <why>", as `cudakit info` says it.
// status() is NVML_ERROR_LIBRARY_NOT_FOUND (12) when the library did not load, otherwise what
// nvmlInit_v2 returned (NVML_ERROR_DRIVER_NOT_LOADED = 9, ...).
class NvmlUnavailableError : public NvmlError {
 public:
  // @param nvml_return NVML_ERROR_LIBRARY_NOT_FOUND, or what nvmlInit_v2 returned.
  // @param api the call that needed NVML.
  // @param why the reason, as reason() returns it.
  // @param location where NVML was needed (the caller's by default).
  NvmlUnavailableError(int nvml_return, std::string api, std::string_view why,
                       std::source_location location = std::source_location::current());
  // The reason alone, without "NVML is not available: ".
  // @return the reason NVML cannot be used.
  [[nodiscard]] const std::string& reason() const noexcept { return reason_; }

 private:
  std::string reason_;
};

}  // namespace cudakit
