#pragma once
// @brief The seam through which the tunable layer takes over tensor::matmul's cuBLAS call. See
// Note [Routing matmul through a hook] in src/tensor/matmul.cpp.

#include <cstdint>

#include "cudakit/core/stream_ref.hpp"
#include "cudakit/tensor/dtype.hpp"

namespace cudakit::tensor {

// The cuBLAS call matmul would make (column-major: C (m x n) = op(A) op(B), strided batches).
// Note that matmul passes its row-major product as the column-major C^T = B^T A^T, so `a` here
// is matmul's right operand and `b` its left. The scalars are alpha = 1, beta = 0.
struct MatmulCall {
  char transa = 'n',  // cuBLAS's operation on A: 'n' (A as stored) or 't' (A transposed)
      transb = 'n';  // cuBLAS's operation on B: 'n' or 't'
  std::int64_t m = 0,  // the rows of op(A) and of C
      n = 0,  // the columns of op(B) and of C
      k = 0,  // the columns of op(A) and the rows of op(B)
      batch = 1;  // how many products (1: not batched)
  const void* a = nullptr;  // A's first element, in device memory of call.stream's device
  std::int64_t lda = 0,  // A's leading dimension, in elements
      stride_a = 0;  // elements between A's batches (0: one A for all)
  const void* b = nullptr;  // B's first element
  std::int64_t ldb = 0,  // B's leading dimension, in elements
      stride_b = 0;  // elements between B's batches (0: one B for all)
  void* c = nullptr;  // C's first element (written, not read: beta is 0)
  std::int64_t ldc = 0,  // C's leading dimension, in elements
      stride_c = 0;  // elements between C's batches
  DType dtype = DType::float32;  // of A, B and C: float32, float16, bfloat16 or float64
  StreamRef stream;  // where the product must be queued (its device is current)
};

// Returns true when it ran the product (queued on call.stream), false to leave it to matmul's own
// cuBLAS call. May throw; matmul passes the error on.
using MatmulHook = bool (*)(const MatmulCall& call);

// Installs `hook` (null: none) for every later matmul on a CUDA tensor. Thread-safe: a matmul
// running concurrently uses the old hook or the new one. The tunable layer calls it; other code
// rarely should.
// @param hook a function that stays callable until it is replaced, or null
void set_matmul_hook(MatmulHook hook) noexcept;
// @return the hook installed now, or null. Thread-safe.
[[nodiscard]] MatmulHook matmul_hook() noexcept;

}  // namespace cudakit::tensor
