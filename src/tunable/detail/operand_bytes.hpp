#pragma once
// The byte span of a column-major GEMM operand, for the trace hooks' read and write sets.

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

}  // namespace cudakit::tunable::detail
