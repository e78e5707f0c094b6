#pragma once
// The calling thread's cuBLAS handle for a stream, bound to a workspace from the caching
// allocator. See Note [cuBLAS workspaces] in src/tensor/cublas_context.cpp. Public (in detail/)
// for the tunable layer, whose Default candidate is this cuBLAS call.

#include <cublas_v2.h>

#include <source_location>

#include "cudakit/core/stream_ref.hpp"

namespace cudakit::tensor::detail {

// @throws CublasError (status() the cublasStatus_t) naming `api` when `status` is not success.
void check_cublas(cublasStatus_t status, const char* api,
                  std::source_location location = std::source_location::current());

// The handle of (calling thread, stream's device), set to `stream` and to the workspace that
// belongs to (thread, stream) — or, while `stream` is capturing, to that capture.
[[nodiscard]] cublasHandle_t cublas_handle(StreamRef stream);

}  // namespace cudakit::tensor::detail
