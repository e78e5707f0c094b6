#pragma once
// cudakit's memory-bound GEMM for m or n <= 16 (decode-style: a large matrix times a few
// vectors). See Note [Decode GEMMs] in gemv.cu.


#include <cstdint>
#include <span>

#include "cudakit/core/stream_ref.hpp"
#include "cudakit/core/trace_event.hpp"
#include "cudakit/tunable/gemm_key.hpp"

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
};

// Whether the kernel handles `key` (dtype float32/16/bfloat16, min(m, n) <= 16, the big operand
// K-contiguous, 16-byte-aligned rows, k a multiple of 16 bytes' worth of elements).
[[nodiscard]] bool gemv_applicable(const GemmKey& key);
// The problem for a key's operands (gemv_applicable(key) must hold); batch b's pointers follow
// from the strides.
[[nodiscard]] GemvProblem gemv_problem(const GemmKey& key, const void* a, const void* b, void* c,
                                       const void* bias, double alpha, double beta);
// Bytes of float scratch a launch with `splits` needs (0 for one split).
[[nodiscard]] std::size_t gemv_workspace_bytes(const GemvProblem& p, int splits);
// Queues the GEMV on `stream`; `workspace` holds gemv_workspace_bytes(p, splits). `operands`: the
// GEMM's byte ranges (gemm_accesses), which its kernels declare to the trace hooks with the
// workspace's.
void launch_gemv(const GemvProblem& p, int splits, void* workspace, StreamRef stream,
                 std::span<const MemoryAccess> operands);

}  // namespace cudakit::tunable::detail
