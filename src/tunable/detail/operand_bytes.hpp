#pragma once
// The byte spans of column-major GEMM operands: the trace hooks' read and write sets, the tuner's
// and the benchmark's buffers.

#include <cstddef>
#include <cstdint>

#include "cudakit/tunable/gemm_key.hpp"

namespace cudakit::tunable::detail {

// The bytes a column-major operand of `rows` x `cols` elements, `ld` apart, spans over `batch`
// matrices `stride` apart: from its first element to its last (0 for an empty one).
inline std::size_t operand_bytes(std::int64_t rows, std::int64_t cols, std::int64_t ld, std::int64_t batch,
                                 std::int64_t stride, GemmDType dtype) {
  if (rows <= 0 || cols <= 0 || batch <= 0) return 0;
  const std::int64_t last = (cols - 1) * ld + rows + (batch - 1) * stride;
  return static_cast<std::size_t>(last) * element_size(dtype);
}

// The bytes A, B and C of `key` span as stored (op(A) is m x k: A is k x m when transposed).
struct GemmOperandBytes {
  std::size_t a = 0, b = 0, c = 0;
};
inline GemmOperandBytes gemm_operand_bytes(const GemmKey& k) {
  const bool ta = k.transa != 'n', tb = k.transb != 'n';
  return {.a = operand_bytes(ta ? k.k : k.m, ta ? k.m : k.k, k.lda, k.batch, k.stride_a, k.a_type),
          .b = operand_bytes(tb ? k.n : k.k, tb ? k.k : k.n, k.ldb, k.batch, k.stride_b, k.b_type),
          .c = operand_bytes(k.m, k.n, k.ldc, k.batch, k.stride_c, k.c_type)};
}

}  // namespace cudakit::tunable::detail
