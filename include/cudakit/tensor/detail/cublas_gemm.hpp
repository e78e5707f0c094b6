#pragma once
// @brief One GEMM through cuBLAS's own entry points, chosen as torch chooses them: see Note [One
// product, one cublasGemmEx] in src/tensor/cublas_gemm.cpp. Public (in detail/) for the tunable
// layer, whose Default candidate is this call.

#include <cublas_v2.h>

namespace cudakit::tensor::detail {

// A column-major D = alpha * op(A) op(B) + beta * C (C = D), or `batch` of them strided apart,
// in cuBLAS's terms. alpha and beta point to values of the compute type's scalar (float, or double
// for CUBLAS_COMPUTE_64F).
struct CublasGemm {
  cublasOperation_t transa = CUBLAS_OP_N;  // op(A)
  cublasOperation_t transb = CUBLAS_OP_N;  // op(B)
  int m = 0, n = 0, k = 0;                 // rows of op(A) and C, columns of op(B) and C, inner dimension
  const void* alpha = nullptr;
  const void* a = nullptr;
  cudaDataType_t a_type = CUDA_R_32F;
  int lda = 0;
  long long stride_a = 0;  // elements from one product's A to the next's (batch > 1)
  const void* b = nullptr;
  cudaDataType_t b_type = CUDA_R_32F;
  int ldb = 0;
  long long stride_b = 0;
  const void* beta = nullptr;
  void* c = nullptr;
  cudaDataType_t c_type = CUDA_R_32F;
  int ldc = 0;
  long long stride_c = 0;
  int batch = 1;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
};

// Runs `gemm` on `handle` (bound to its stream and workspace: cublas_handle()):
// cublasGemmEx for one product, cublasGemmStridedBatchedEx for a batch, with CUBLAS_GEMM_DEFAULT.
// @param handle the calling thread's handle for the stream
// @param gemm the product
// @throws CublasError naming the cuBLAS call that failed
void cublas_gemm(cublasHandle_t handle, const CublasGemm& gemm);

}  // namespace cudakit::tensor::detail
