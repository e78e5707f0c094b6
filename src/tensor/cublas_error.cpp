#include "cudakit/tensor/cublas_error.hpp"

#include <cublas_api.h>

#include "cudakit/core/detail/concat.hpp"

namespace cudakit {

CublasError::CublasError(int cublas_status, std::string api, std::string_view detail, std::source_location location)
    : ErrorOf(cublas_status, api,
              detail::concat(cublasGetStatusName(static_cast<cublasStatus_t>(cublas_status)), ": ",
                             cublasGetStatusString(static_cast<cublasStatus_t>(cublas_status)),
                             detail.empty() ? "" : " (", detail, detail.empty() ? "" : ")"),
              location) {}

}  // namespace cudakit
