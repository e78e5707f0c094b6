#pragma once
// What the results store needs of the GEMM side: whether a stored solution still runs here, and
// routing tensor::matmul through TunableOp.

#include "cudakit/tunable/gemm_key.hpp"
#include "cudakit/tunable/solution.hpp"

namespace cudakit::tunable::detail {

// Whether `solution` runs for `key` on the current device (cuBLASLt: cublasLtMatmulAlgoCheck
// accepts the configuration; GEMV: the kernel handles the shape; Default: always).
[[nodiscard]] bool solution_runs_here(const GemmKey& key, const Solution& solution);

// Installs (or removes) the tensor::matmul hook (cudakit/tensor/matmul_hook.hpp).
void route_matmul(bool on) noexcept;

}  // namespace cudakit::tunable::detail
