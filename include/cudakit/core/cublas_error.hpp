#pragma once
// Forwarding header, kept for the 0.1 releases only: CublasError moved to the tensor layer, beside
// the cuBLAS calls that throw it. Include "cudakit/tensor/cublas_error.hpp" instead.
// cudakit: forwarding header (See Note [Forwarding headers] in cmake/check_layer_includes.cmake)
#include "cudakit/tensor/cublas_error.hpp"
