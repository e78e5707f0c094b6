#include "cudakit/jiterator/nvrtc_error.hpp"

#include <utility>

#include "cudakit/core/detail/concat.hpp"

namespace cudakit {

NvrtcError::NvrtcError(int nvrtc_result, std::string api, std::string_view detail,
                       std::string log, std::string source, std::source_location location)
    : ErrorOf(nvrtc_result, api,
              detail::concat(detail, log.empty() ? "" : "\n", log), location),
      log_(std::move(log)), source_(std::move(source)) {}

}  // namespace cudakit
