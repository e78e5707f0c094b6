#include "cudakit/tensor/detail/cublas_gemm.hpp"

#include "cudakit/tensor/detail/cublas_context.hpp"

namespace cudakit::tensor::detail {

// Note [One product, one cublasGemmEx]
// torch's mm reaches cuBLAS through cublasGemmEx and its bmm through cublasGemmStridedBatchedEx.
// cudakit called the strided form for every product, a batch of one included: cuBLAS turns both
// into the same heuristic query and kernel (the loggers on the device, notes/tunable.md). The
// strided form with a batch of one was suspected of costing more host time a call (notes/tunable.md,
// "route_torch() in C++"); timed alone, the two calls cost the same (probe/call_costs.cpp, notes/tunable.md).
// One product takes torch's call all the same, so that the Default candidate is torch's own path,
// host side included; a batch keeps the strided call.
void cublas_gemm(cublasHandle_t handle, const CublasGemm& g) {
  if (g.batch == 1) {
    check_cublas(cublasGemmEx(handle, g.transa, g.transb, g.m, g.n, g.k, g.alpha, g.a, g.a_type, g.lda, g.b,
                              g.b_type, g.ldb, g.beta, g.c, g.c_type, g.ldc, g.compute, CUBLAS_GEMM_DEFAULT),
                 "cublasGemmEx");
    return;
  }
  check_cublas(cublasGemmStridedBatchedEx(handle, g.transa, g.transb, g.m, g.n, g.k, g.alpha, g.a, g.a_type, g.lda,
                                          g.stride_a, g.b, g.b_type, g.ldb, g.stride_b, g.beta, g.c, g.c_type, g.ldc,
                                          g.stride_c, g.batch, g.compute, CUBLAS_GEMM_DEFAULT),
               "cublasGemmStridedBatchedEx");
}

}  // namespace cudakit::tensor::detail
