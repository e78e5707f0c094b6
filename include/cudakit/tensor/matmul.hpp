#pragma once
// Matrix products through cuBLAS (cublasGemmEx, cublasGemmStridedBatchedEx) for CUDA tensors, a
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
// @throws InvalidArgumentError naming both shapes when they do not fit.
[[nodiscard]] Tensor matmul(const Tensor& a, const Tensor& b, OptionalStream stream = {});

}  // namespace cudakit::tensor
