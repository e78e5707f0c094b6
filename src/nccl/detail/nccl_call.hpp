#pragma once
// Checking NCCL calls: an ncclResult_t other than success (or in-progress, where allowed)
// becomes an NcclError with the API, the rank, the operation and NCCL's own last error text.

#include <nccl.h>

#include <string>

#include "cudakit/core/detail/nccl_api.hpp"

namespace cudakit::nccl::detail {

// The NCCL table, loaded. @throws StateError naming `api` and why NCCL is not available.
const cudakit::detail::NcclApi& loaded_nccl(const char* api);

// Throws NcclError for a failed `result` (ncclInProgress counts as success).
void check_nccl(ncclResult_t result, const char* api, int rank, const std::string& operation);

// The text NCCL gives for `result`, with ncclGetLastError's detail where there is one.
std::string nccl_error_text(ncclResult_t result, ncclComm_t comm);

}  // namespace cudakit::nccl::detail
