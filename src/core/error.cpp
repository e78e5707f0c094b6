#include "cudakit/core/error.hpp"
#include "cudakit/core/launch_check.hpp"
#include "cudakit/core/log.hpp"

#include <cstdio>
#include "cudakit/core/detail/concat.hpp"

#include "cudakit/core/driver_api.hpp"

namespace cudakit {
namespace detail {

std::string format_error_message(std::string_view api, std::string_view detail,
                                 const std::source_location& location) {
  // The message is for the user, who needs what failed; where in cudakit's sources it was raised
  // is for whoever debugs cudakit: location(), and the debug log.
  std::string_view file = location.file_name();
  if (auto slash = file.rfind('/'); slash != std::string_view::npos) file.remove_prefix(slash + 1);
  CUDAKIT_LOG(debug, api, " raised at ", file, ":", location.line(), ": ", detail);
  return concat(api, ": ", detail);
}

std::string api_name_from_call(std::string_view call_text) {
  auto paren = call_text.find('(');
  std::string_view name = call_text.substr(0, paren);
  // "driver().cuMemMap" -> "cuMemMap", "::cudaMalloc" -> "cudaMalloc"
  if (auto sep = name.find_last_of(".:>"); sep != std::string_view::npos) name.remove_prefix(sep + 1);
  while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
  while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
  return std::string(name.empty() ? call_text : name);
}

void throw_cuda_error(cudaError_t status, const char* call_text, std::source_location location) {
  // Clears the runtime's last-error slot for recoverable errors so that the next call starts clean.
  (void)cudaGetLastError();
  std::string api = api_name_from_call(call_text);
  if (status == cudaErrorMemoryAllocation) {
    throw OutOfMemoryError(api, concat(cudaGetErrorString(status), " (in `", call_text, "`)"),
                           0, location);
  }
  throw CudaError(status, std::move(api), concat("in `", call_text, "`"), location);
}

void throw_driver_error(int cu_result, const char* call_text, std::source_location location) {
  throw CudaError::from_driver(cu_result, api_name_from_call(call_text),
                               concat("in `", call_text, "`"), location);
}

void throw_launch_error(cudaError_t status, const char* kernel, std::source_location location) {
  throw CudaError(status, "kernel launch", concat("of ", kernel), location);
}

void throw_moved_from(const char* type, const char* api) {
  throw StateError(concat(type, "::", api),
                   concat("this ", type, " was moved from; it owns nothing and cannot be used "
                          "(assign a new ", type, " to it first)"));
}

bool query_ready(cudaError_t status, const char* call_text, std::source_location location) {
  if (status == cudaSuccess) return true;
  if (status == cudaErrorNotReady) {
    (void)cudaGetLastError();
    return false;
  }
  throw_cuda_error(status, call_text, location);
}

void warn_cuda_error(cudaError_t status, const char* call_text,
                     std::source_location location) noexcept {
  if (status == cudaSuccess) return;
  (void)cudaGetLastError();
  // At process exit the runtime may already be torn down: that is not worth a message.
  if (status == cudaErrorCudartUnloading || status == cudaErrorContextIsDestroyed) return;
  if (!log_enabled(LogLevel::warning)) return;
  log(LogLevel::warning,
      concat(location.file_name(), ":", location.line(), ": `", call_text, "` failed: ",
             cudaGetErrorString(status), " (", static_cast<int>(status), ")"),
      location);
}

}  // namespace detail

CudaError::CudaError(cudaError_t status, std::string api, std::string_view detail,
                     std::source_location location)
    : ErrorOf(static_cast<int>(status), api,
              detail::concat(cudaGetErrorString(status), " (", cudaGetErrorName(status), ", error ",
                             static_cast<int>(status), ")", detail.empty() ? "" : " ", detail),
              location) {}

CudaError::CudaError(DriverTag, int cu_result, std::string api, std::string_view detail,
                     std::source_location location)
    : ErrorOf(cu_result, api,
              detail::concat(detail::driver_error_string(cu_result), " (CUresult ", cu_result, ")",
                             detail.empty() ? "" : " ", detail),
              location),
      driver_(true) {}

CudaError CudaError::from_driver(int cu_result, std::string api, std::string_view detail,
                                 std::source_location location) {
  return CudaError(DriverTag{}, cu_result, std::move(api), detail, location);
}

OutOfMemoryError::OutOfMemoryError(std::string api, std::string_view report,
                                   std::size_t requested_bytes, std::source_location location)
    : ErrorOf(static_cast<int>(cudaErrorMemoryAllocation), api,
              detail::concat("out of memory: ", report), location),
      requested_bytes_(requested_bytes) {}

InvalidArgumentError::InvalidArgumentError(std::string api, std::string_view detail,
                                           std::source_location location)
    : ErrorOf(0, api, detail::concat("invalid argument: ", detail), location) {}

FileError::FileError(int error_number, std::string api, std::string_view detail,
                     std::source_location location)
    : ErrorOf(error_number, api, detail, location) {}

StateError::StateError(std::string api, std::string_view detail, std::source_location location)
    : ErrorOf(0, api, detail, location) {}

}  // namespace cudakit
