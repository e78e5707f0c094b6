#pragma once
// @brief Matrix products through cuBLAS (cublasGemmEx, cublasGemmStridedBatchedEx) for CUDA tensors, a
// plain loop for host tensors (a reference, not fast). float32 (no TF32), float16 and bfloat16
// (float accumulation), float64.
//
// cuBLAS handles: one per (device, thread), made on first use and set to the call's stream each
// time (cuBLAS handles are not thread-safe; torch keeps one per thread too), with a workspace
// from the caching allocator per (thread, stream), or per capture while the stream is capturing
// (cudakit/tensor/cublas_workspace.hpp).

#include "cudakit/tensor/tensor.hpp"

namespace cudakit::tensor {

// [m, k] x [k, n] -> [m, n]; [b, m, k] x [b, k, n] -> [b, m, n]; [b, m, k] x [k, n] -> [b, m, n].
// Inputs that are transposed views of contiguous matrices are used in place (no copy).
// @param a the left operand: float32, float16, bfloat16 or float64
// @param b the right operand: a's dtype and device
// @param stream where a CUDA product is computed: the cuBLAS call (or, with TunableOp enabled,
//   the tuned kernel) is queued on `stream` (default: the current stream of the operands'
//   device) and the call returns before it finishes; a host product is computed before it
//   returns
// @return a new contiguous tensor
// @throws InvalidArgumentError naming both shapes when they do not fit.
// @throws InvalidArgumentError for other dtypes (FP8 goes through tunable's scaled GEMM),
//   operands of different dtypes or devices, or other ranks.
// @throws CublasError when cuBLAS refuses the call (its status, named)
// @throws OutOfMemoryError when the result or the cuBLAS workspace cannot be allocated.
// @throws StateError for an undefined tensor.
[[nodiscard]] Tensor matmul(const Tensor& a, const Tensor& b, OptionalStream stream = {});

}  // namespace cudakit::tensor
