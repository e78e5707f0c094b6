#pragma once
// @brief The seam through which the tunable layer takes over tensor::matmul's cuBLAS call. See
// Note [Routing matmul through a hook] in src/tensor/matmul.cpp.

#include <cstdint>

#include "cudakit/core/stream_ref.hpp"
#include "cudakit/tensor/dtype.hpp"

namespace cudakit::tensor {

// The cuBLAS call matmul would make (column-major: C (m x n) = op(A) op(B), strided batches).
struct MatmulCall {
  char transa = 'n', transb = 'n';
  std::int64_t m = 0, n = 0, k = 0, batch = 1;
  const void* a = nullptr;
  std::int64_t lda = 0, stride_a = 0;
  const void* b = nullptr;
  std::int64_t ldb = 0, stride_b = 0;
  void* c = nullptr;
  std::int64_t ldc = 0, stride_c = 0;
  DType dtype = DType::float32;
  StreamRef stream;
};

// Returns true when it ran the product (queued on call.stream), false to leave it to matmul's own
// cuBLAS call. May throw; matmul passes the error on.
using MatmulHook = bool (*)(const MatmulCall& call);

// Installs `hook` (null: none) for every later matmul on a CUDA tensor. Thread-safe.
void set_matmul_hook(MatmulHook hook) noexcept;
[[nodiscard]] MatmulHook matmul_hook() noexcept;

}  // namespace cudakit::tensor
