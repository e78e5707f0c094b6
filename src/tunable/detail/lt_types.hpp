#pragma once
// The CUDA and cuBLAS types of a key: element types, compute type, scale type.

#include <cublas_api.h>
#include <library_types.h>

#include "cudakit/tunable/gemm_key.hpp"

namespace cudakit::tunable::detail {

struct LtTypes {
  cudaDataType_t a, b, c;  // D is C's type
  cublasComputeType_t compute;
  cudaDataType_t scale;
};

inline cudaDataType_t cuda_type(GemmDType t) {
  switch (t) {
    case GemmDType::float16: return CUDA_R_16F;
    case GemmDType::bfloat16: return CUDA_R_16BF;
    case GemmDType::float64: return CUDA_R_64F;
    case GemmDType::float8_e4m3: return CUDA_R_8F_E4M3;
    case GemmDType::float8_e5m2: return CUDA_R_8F_E5M2;
    case GemmDType::float32: break;
  }
  return CUDA_R_32F;
}

inline LtTypes lt_types(const GemmKey& key) {
  LtTypes t{cuda_type(key.a_type), cuda_type(key.b_type), cuda_type(key.c_type), CUBLAS_COMPUTE_32F, CUDA_R_32F};
  if (key.a_type == GemmDType::float64) {
    t.compute = CUBLAS_COMPUTE_64F;
    t.scale = CUDA_R_64F;
  } else if (key.tf32) {
    t.compute = CUBLAS_COMPUTE_32F_FAST_TF32;
  }
  return t;
}

}  // namespace cudakit::tunable::detail
