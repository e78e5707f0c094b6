#include "cudakit/nccl/nccl_error.hpp"

#include "cudakit/core/detail/concat.hpp"

namespace cudakit {

NcclError::NcclError(int nccl_result, std::string api, int rank, std::string operation, std::string_view detail,
                     std::source_location location)
    : ErrorOf(nccl_result, api,
              detail::concat("rank ", rank, ", ", operation.empty() ? std::string("?") : operation,
                             nccl_result != 0 ? detail::concat(" (ncclResult ", nccl_result, ")") : std::string(), ": ",
                             detail),
              location),
      rank_(rank), operation_(std::move(operation)) {}

}  // namespace cudakit
