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
  IoError(int error_number, std::string api, std::string_view detail,
          std::source_location location = std::source_location::current());
};

// cuFile refused a file, a buffer or a transfer. status() is cuFile's CUfileOpError (or, for a
// read or write, the negated return value).
class CuFileError : public detail::ErrorOf<std::runtime_error> {
 public:
  CuFileError(int cufile_status, std::string api, std::string_view detail,
              std::source_location location = std::source_location::current());
};

}  // namespace cudakit::gds
