#pragma once
// CUTLASS's Hopper GEMM kernels (TMA + WGMMA, warp-specialized) as tuner candidates. See Note
// [CUTLASS candidates] in cutlass_gemm.cpp.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <vector>

#include "cudakit/core/stream_ref.hpp"
#include "cudakit/tunable/gemm_key.hpp"
#include "cudakit/tunable/solution.hpp"

namespace cudakit::tunable::detail {

// The configurations the build instantiates (CMake's CUDAKIT_CUTLASS_CONFIG_COUNT says how many
// there are: one generated source per configuration and dtype), each for bfloat16 and float16
// and for the layouts TN and NN (B K-major; A either way).
inline constexpr CutlassConfig kCutlassConfigs[] = {
    {128, 256, 64, 2, 1, CutlassSchedule::cooperative},
    {256, 128, 64, 1, 2, CutlassSchedule::cooperative},
    {128, 128, 64, 1, 2, CutlassSchedule::pingpong},
    {128, 256, 64, 1, 1, CutlassSchedule::stream_k},
};
inline constexpr int kCutlassConfigCount = static_cast<int>(std::size(kCutlassConfigs));

// The swizzles of the tile order each configuration is offered at (CUTLASS's max_swizzle_size:
// 2^s consecutive tiles along one side before the other advances, for L2 reuse).
inline constexpr int kCutlassSwizzles[] = {1, 4};

// The compute capability the kernels are built for (sm_90a: Hopper only; they do not run on
// later architectures, whose features differ).
inline constexpr int kCutlassComputeCapability = 90;

// The Kind::cutlass solution of `config`.
[[nodiscard]] inline Solution cutlass_solution(const CutlassConfig& config) {
  Solution s;
  s.kind = Solution::Kind::cutlass;
  s.cutlass = config;
  return s;
}

// Whether this build has the CUTLASS kernels (the CMake option CUDAKIT_CUTLASS).
[[nodiscard]] bool cutlass_built() noexcept;

// Whether the kernel of `solution` (a Kind::cutlass one) handles `key` on a device of compute
// capability `capability` (major * 10 + minor), whether or not this build has it: one of
// kCutlassConfigs (at any swizzle of 1, 2, 4 or 8); a gemm or gemm_strided_batched key of bfloat16 or float16 (A, B and C the
// same type), no epilogue; op(B) K-major (transb = n); 16-byte aligned pointers, leading
// dimensions, batch strides and contiguous extents (k, and m for transa = n and for C), as TMA
// needs; batches one after another (no stride 0, no overlap); sizes and the batch within int.
[[nodiscard]] bool cutlass_applicable(const GemmKey& key, const Solution& solution, int capability);
// The CUTLASS solutions the tuner times for `key` on such a device (empty when this build has
// none, or none applies).
[[nodiscard]] std::vector<Solution> cutlass_candidates(const GemmKey& key, int capability);

// One GEMM in the key's column-major terms, with its operands.
struct CutlassProblem {
  GemmDType dtype = GemmDType::bfloat16;
  char transa = 't';
  int m = 0, n = 0, k = 0, batch = 1;
  std::int64_t lda = 0, ldb = 0, ldc = 0;
  std::int64_t stride_a = 0, stride_b = 0, stride_c = 0;
  const void* a = nullptr;
  const void* b = nullptr;
  void* c = nullptr;  // C and D: beta reads it, the result overwrites it
  float alpha = 1, beta = 0;
  int swizzle = 1;  // the solution's (cutlass_workspace_bytes and launch_cutlass set it)
  int device = 0;
  int sm_count = 0;  // the persistent kernels' grid: the key's SM count (a green context's)
};

[[nodiscard]] CutlassProblem cutlass_problem(const GemmKey& key, const void* a, const void* b, void* c,
                                             double alpha, double beta, int device);
// Bytes of workspace the kernel of `solution` needs for `p` (the stream-K schedule's partial
// sums; 0 or little for the others). @throws InvalidArgumentError when the build lacks it.
[[nodiscard]] std::size_t cutlass_workspace_bytes(const CutlassProblem& p, const Solution& solution);
// Queues the GEMM on `stream`; `workspace` holds cutlass_workspace_bytes(p, solution).
// @throws InvalidArgumentError when the build lacks the kernel or CUTLASS refuses the problem,
// CudaError when the launch fails.
void launch_cutlass(const CutlassProblem& p, const Solution& solution, void* workspace, StreamRef stream);

// One kernel's entry points (cutlass_kernel.cuh defines them; a generated source per
// configuration and dtype instantiates them).
struct CutlassKernel {
  std::size_t (*workspace_bytes)(const CutlassProblem&);
  void (*run)(const CutlassProblem&, void* workspace, cudaStream_t);
};
// The kernel of configuration kCutlassConfigs[Config] for dtype D, A's layout given by transa.
template <int Config, GemmDType D>
[[nodiscard]] CutlassKernel cutlass_kernel(char transa);

}  // namespace cudakit::tunable::detail
