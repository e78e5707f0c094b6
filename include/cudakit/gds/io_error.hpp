#pragma once
// @brief The gds layer's errors, in cudakit's one family (core/error.hpp): IoError for a file
// operation that failed (status(): errno), CuFileError for cuFile (status(): its CUfileOpError).

#include <stdexcept>
#include <string>
#include <string_view>

#include "cudakit/core/error.hpp"

namespace cudakit::gds {

// A read, write, open, sync or rename failed or fell short. The message names the path, the
// offset and the sizes involved; status() is errno (0 for a short transfer without one).
class IoError : public detail::ErrorOf<std::runtime_error> {
 public:
  // The error for a failed file operation.
  // @param error_number the errno (0 for a short transfer without one); status() returns it
  // @param api the operation that failed ("pread", "GdsFile::load", ...)
  // @param detail the message: path, offset and sizes involved
  // @param location where the failing call was made
  IoError(int error_number, std::string api, std::string_view detail,
          std::source_location location = std::source_location::current());
};

// cuFile refused a file, a buffer or a transfer. status() is cuFile's CUfileOpError (or, for a
// read or write, the negated return value).
class CuFileError : public detail::ErrorOf<std::runtime_error> {
 public:
  // The error for a cuFile refusal.
  // @param cufile_status the CUfileOpError, or a read's or write's negated return value
  // @param api the cuFile call or the GdsFile operation that failed
  // @param detail the message
  // @param location where the failing call was made
  CuFileError(int cufile_status, std::string api, std::string_view detail,
              std::source_location location = std::source_location::current());
};

}  // namespace cudakit::gds
