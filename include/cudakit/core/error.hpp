#pragma once
// @brief The one error family of cudakit. See Note [Error hierarchy].

#include <cuda_runtime_api.h>

#include <new>
#include <source_location>
#include <stdexcept>
#include <string>
#include <string_view>

namespace cudakit {

// Note [Error hierarchy]
// Every error cudakit throws is a cudakit::Error (status, API name, source location) and exactly
// one std::exception. OutOfMemoryError must also be a std::bad_alloc, so Error cannot itself
// derive from std::exception: a class holding both std::runtime_error and std::bad_alloc has two
// std::exception bases, and `catch (const std::exception&)` silently misses it. Error is
// therefore a mixin; each concrete error takes its standard base through ErrorOf<StdBase>, and
// catching std::exception, cudakit::Error or (for OOM) std::bad_alloc all work.

// The base of every error cudakit throws: a status code, the failing API's name and the call's
// source location. Catch it as `const cudakit::Error&` for all of them; each concrete error is
// also exactly one std::exception (see Note [Error hierarchy]).
class Error {
 public:
  // Virtual: errors are caught and destroyed through the base.
  virtual ~Error() = default;
  // The library's status code for this error: a cudaError_t, CUresult, ncclResult_t, ... as
  // named by the derived class; 0 for errors raised by cudakit's own argument checks.
  // @return the status code (0 for cudakit's own checks).
  [[nodiscard]] int status() const noexcept { return status_; }
  // The API whose failure this reports ("cudaMalloc", "cuMemMap", "Event::elapsed_time").
  // @return the API's name.
  [[nodiscard]] const std::string& api() const noexcept { return api_; }
  // Where the failing call was made.
  // @return the source location of the call that failed (not part of what()).
  [[nodiscard]] const std::source_location& location() const noexcept { return location_; }
  // The message, "api: detail"; the source location is not in it (see location()).
  // @return a string owned by the error, valid while it lives.
  [[nodiscard]] virtual const char* what() const noexcept = 0;

 protected:
  // For the concrete errors only.
  // @param status the library's status code (0 for cudakit's own checks).
  // @param api the name of the failing API.
  // @param location where the failing call was made.
  Error(int status, std::string api, std::source_location location)
      : status_(status), api_(std::move(api)), location_(location) {}

 private:
  int status_;
  std::string api_;
  std::source_location location_;
};

namespace detail {
// Builds "api: detail" once, when the error is made; the source location is not in the message
// (it is location(), and a debug-level log record names it).
std::string format_error_message(std::string_view api, std::string_view detail,
                                 const std::source_location& location);

template <class StdBase>
class ErrorOf : public StdBase, public Error {
 public:
  [[nodiscard]] const char* what() const noexcept override { return message_.c_str(); }

 protected:
  ErrorOf(int status, std::string api, std::string_view detail, std::source_location location)
      : StdBase(make_base()), Error(status, api, location),
        message_(format_error_message(api, detail, location)) {}

 private:
  static StdBase make_base() {
    if constexpr (std::is_constructible_v<StdBase, const char*>) return StdBase("cudakit error");
    else return StdBase();
  }
  std::string message_;
};
}  // namespace detail

// A CUDA runtime or driver call failed. status() is the cudaError_t (runtime) or the CUresult
// (driver): is_driver_error() says which.
class CudaError : public detail::ErrorOf<std::runtime_error> {
 public:
  // A runtime-API failure. Prefer CUDAKIT_CHECK_CUDA, which also turns an allocation failure
  // into OutOfMemoryError and clears a non-sticky error.
  // @param status the failing call's cudaError_t (its cudaGetErrorString() is in the message).
  // @param api the API's name, e.g. "cudaMemcpyAsync".
  // @param detail more context for the message; may be empty.
  // @param location where the call was made (the caller's by default).
  CudaError(cudaError_t status, std::string api, std::string_view detail = {},
            std::source_location location = std::source_location::current());
  // From a driver-API CUresult.
  // @param cu_result the failing call's CUresult, as an int (cudakit does not include cuda.h in
  //        public headers).
  // @param api the API's name, e.g. "cuMemMap".
  // @param detail more context for the message; may be empty.
  // @param location where the call was made (the caller's by default).
  // @return the error, with is_driver_error() true.
  static CudaError from_driver(int cu_result, std::string api, std::string_view detail = {},
                               std::source_location location = std::source_location::current());
  // @return status() as a cudaError_t; meaningful only when is_driver_error() is false.
  [[nodiscard]] cudaError_t cuda_status() const noexcept {
    return static_cast<cudaError_t>(status());
  }
  // @return true when status() is a driver CUresult, false when it is a cudaError_t.
  [[nodiscard]] bool is_driver_error() const noexcept { return driver_; }

 private:
  struct DriverTag {};
  CudaError(DriverTag, int cu_result, std::string api, std::string_view detail,
            std::source_location location);
  bool driver_ = false;
};

// Device (or pinned host) memory could not be provided. The message is the full report
// (requested size, device total and free, cudakit's allocated and reserved memory, ...).
class OutOfMemoryError : public detail::ErrorOf<std::bad_alloc> {
 public:
  // @param api the allocating API, e.g. "cudaMalloc" or "CachingAllocator::allocate".
  // @param report the report; the message is "api: out of memory: report".
  //        status() is cudaErrorMemoryAllocation.
  // @param requested_bytes the size of the request that failed, in bytes.
  // @param location where the allocation was asked for (the caller's by default).
  OutOfMemoryError(std::string api, std::string_view report, std::size_t requested_bytes,
                   std::source_location location = std::source_location::current());
  // @return the size of the request that failed, in bytes.
  [[nodiscard]] std::size_t requested_bytes() const noexcept { return requested_bytes_; }

 private:
  std::size_t requested_bytes_;
};

// cudakit rejected an argument before calling into CUDA (bad device ordinal, wrong event
// flags, malformed configuration string, ...). status() is 0.
class InvalidArgumentError : public detail::ErrorOf<std::invalid_argument> {
 public:
  // @param api the function that rejected the argument.
  // @param detail what was wrong, with the offending values.
  // @param location where the check failed (the caller's by default).
  InvalidArgumentError(std::string api, std::string_view detail,
                       std::source_location location = std::source_location::current());
};

// A file could not be read or written for a reason of the system's (a full disk, no permission,
// a read-only file): status() is the errno, and the message names the file and says why.
class FileError : public detail::ErrorOf<std::runtime_error> {
 public:
  // @param error_number the errno of the failed system call.
  // @param api the function that failed.
  // @param detail the file's path and what was being done.
  // @param location where the failure was seen (the caller's by default).
  FileError(int error_number, std::string api, std::string_view detail,
            std::source_location location = std::source_location::current());
};

// A state the call requires does not hold (event not yet recorded, capture not active, ...).
class StateError : public detail::ErrorOf<std::logic_error> {
 public:
  // @param api the call that found the wrong state, e.g. "Event::elapsed_time".
  // @param detail which state was required and which held.
  // @param location where it was found (the caller's by default).
  StateError(std::string api, std::string_view detail,
             std::source_location location = std::source_location::current());
};

namespace detail {
[[noreturn]] void throw_cuda_error(cudaError_t status, const char* call_text,
                                   std::source_location location);
[[noreturn]] void throw_driver_error(int cu_result, const char* call_text,
                                     std::source_location location);
// The API name in a call's text: "cudaMalloc(&p, n)" -> "cudaMalloc".
std::string api_name_from_call(std::string_view call_text);
}  // namespace detail

}  // namespace cudakit

// Checks a CUDA runtime call; on failure throws CudaError naming the call. The message is built
// only on failure, and the sticky error state is cleared for non-sticky errors.
#define CUDAKIT_CHECK_CUDA(call)                                                            \
  do {                                                                                      \
    const ::cudaError_t cudakit_status_ = (call);                                           \
    if (cudakit_status_ != ::cudaSuccess) [[unlikely]]                                      \
      ::cudakit::detail::throw_cuda_error(cudakit_status_, #call,                           \
                                          ::std::source_location::current());               \
  } while (0)

// The same for a driver call made through the entry-point table (returns CUresult).
#define CUDAKIT_CHECK_DRIVER(call)                                                          \
  do {                                                                                      \
    const int cudakit_result_ = static_cast<int>(call);                                     \
    if (cudakit_result_ != 0) [[unlikely]]                                                  \
      ::cudakit::detail::throw_driver_error(cudakit_result_, #call,                         \
                                            ::std::source_location::current());             \
  } while (0)

// For destructors and other no-throw paths: a failure is ignored once the runtime is unloading,
// and otherwise reported to stderr, never thrown.
#define CUDAKIT_WARN_CUDA(call)                                                             \
  ::cudakit::detail::warn_cuda_error((call), #call, ::std::source_location::current())

// For cudaStreamQuery / cudaEventQuery: true when complete, false for cudaErrorNotReady (which
// is cleared), CudaError for anything else.
#define CUDAKIT_QUERY_CUDA(call) \
  ::cudakit::detail::query_ready((call), #call, ::std::source_location::current())

namespace cudakit::detail {
bool query_ready(cudaError_t status, const char* call_text, std::source_location location);
void warn_cuda_error(cudaError_t status, const char* call_text,
                     std::source_location location) noexcept;
}
