#include "cudakit/gds/io_error.hpp"

namespace cudakit::gds {

IoError::IoError(int error_number, std::string api, std::string_view detail,
                 std::source_location location)
    : ErrorOf(error_number, std::move(api), detail, location) {}

CuFileError::CuFileError(int cufile_status, std::string api, std::string_view detail,
                         std::source_location location)
    : ErrorOf(cufile_status, std::move(api), detail, location) {}

}  // namespace cudakit::gds
