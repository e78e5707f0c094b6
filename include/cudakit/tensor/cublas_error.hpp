#pragma once
// @brief CublasError: the error family's member for cuBLAS and cuBLASLt, in the layer that
// calls cuBLAS (See Note [Error hierarchy] in error.hpp).

#include <string>
#include <string_view>

#include "cudakit/core/error.hpp"

namespace cudakit {

// A cuBLAS or cuBLASLt call failed. status() is the cublasStatus_t (CUBLAS_STATUS_NOT_SUPPORTED
// is 15); the message names it and cuBLAS's text for it ("CUBLAS_STATUS_NOT_SUPPORTED: the
// requested functionality is not supported").
class CublasError : public detail::ErrorOf<std::runtime_error> {
 public:
  // The error for `cublas_status`, returned by `api`.
  // @param cublas_status the cublasStatus_t, as an int (status() returns it)
  // @param api the call that failed ("cublasGemmEx", "cublasLtMatmul", ...)
  // @param detail more text for the message (may be empty)
  // @param location where the failing call was made
  CublasError(int cublas_status, std::string api, std::string_view detail = {},
              std::source_location location = std::source_location::current());
};

}  // namespace cudakit
