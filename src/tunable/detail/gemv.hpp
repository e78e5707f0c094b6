#pragma once
// cudakit's memory-bound GEMMs for m or n <= 16 (decode-style: a large matrix times a few
// vectors). See Note [Decode GEMMs] in gemv.cu.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "cudakit/core/stream_ref.hpp"
#include "cudakit/core/trace_event.hpp"
#include "cudakit/tunable/gemm_key.hpp"
#include "cudakit/tunable/solution.hpp"

namespace cudakit::tunable::detail {

// The problem as "rows of a big matrix, each k long and contiguous, times a k x s small operand".
struct GemvProblem {
  GemmDType dtype = GemmDType::float32;
  std::int64_t rows = 0, s = 0, k = 0, batch = 1;
  const void* big = nullptr;
  std::int64_t big_ld = 0, big_batch_stride = 0;
  const void* small = nullptr;
  std::int64_t small_stride_k = 0, small_stride_s = 0, small_batch_stride = 0;
  void* out = nullptr;
  std::int64_t out_stride_row = 0, out_stride_s = 0, out_batch_stride = 0;
  const void* bias = nullptr;  // null: none
  bool bias_per_row = true;    // bias[row] (else bias[s index])
  Epilogue epilogue = Epilogue::none;
  float alpha = 1, beta = 0;
  // Whether every row of the big operand (every column of the small one) starts 16-byte aligned,
  // so that 16-byte loads may read them; else the kernels read element by element.
  bool big_vector = false;
  bool small_vector = false;
};

// Whether `solution` (a Kind::gemv one) handles `key`: dtype float32/16/bfloat16 (GemvMma: 16-bit
// only), min(m, n) <= 16 with the big operand K-contiguous (A with transa = t when n <= 16, B with
// transb = n when m <= 16), a block row count the kernel has; Gemv_k also needs 16-byte-aligned
// rows and k a multiple of 16 bytes' worth of elements, the others read any alignment and k.
[[nodiscard]] bool gemv_applicable(const GemmKey& key, const Solution& solution);
// The GEMV solutions the tuner times for `key` (empty when none applies).
[[nodiscard]] std::vector<Solution> gemv_candidates(const GemmKey& key);
// The problem for a key's operands (some GEMV must apply to the key); batch b's pointers follow
// from the strides.
[[nodiscard]] GemvProblem gemv_problem(const GemmKey& key, const void* a, const void* b, void* c,
                                       const void* bias, double alpha, double beta);
// Bytes of float scratch a launch with `splits` needs (0 for one split).
[[nodiscard]] std::size_t gemv_workspace_bytes(const GemvProblem& p, int splits);
// Queues the GEMV on `stream`; `workspace` holds gemv_workspace_bytes(p, solution.gemv_splits).
// `operands`: the GEMM's byte ranges (gemm_accesses), which its kernels declare to the trace
// hooks with the workspace's.
void launch_gemv(const GemvProblem& p, const Solution& solution, void* workspace, StreamRef stream,
                 std::span<const MemoryAccess> operands);

}  // namespace cudakit::tunable::detail
