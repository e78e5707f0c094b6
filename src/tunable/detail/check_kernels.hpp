#pragma once
// Kernels the tuner needs around the candidates: operands of random values, and the comparison of
// a candidate's output with Default's (Note [GEMM tolerance]).

#include <cstddef>
#include <cstdint>

#include "cudakit/core/stream_ref.hpp"
#include "cudakit/tunable/gemm_key.hpp"
#include "cudakit/tunable/tolerance.hpp"

namespace cudakit::tunable::detail {

// `count` elements of `dtype` at `data`, uniform in [-1, 1] from `seed` (a counter hash: the
// same values on every device and run).
void fill_random(void* data, GemmDType dtype, std::size_t count, std::uint64_t seed, StreamRef stream);
// A device float of 1.0 on the current device: a module variable, so no allocation or copy (it
// may be asked for during a graph capture). The placeholder scale of Note [FP8 layouts].
[[nodiscard]] const float* device_unit_scale();
// `count` elements of `dtype` set to `value`.
void fill_value(void* data, GemmDType dtype, std::size_t count, float value, StreamRef stream);

// The largest tolerance_ratio over the m x n matrices (ldc apart, `batch` of them `stride`
// apart) of `got` against `ref`; NaN when an element is NaN on one side only. Waits for `stream`.
[[nodiscard]] double max_tolerance_ratio(const void* got, const void* ref, GemmDType dtype, std::int64_t m,
                                         std::int64_t n, std::int64_t ldc, std::int64_t batch, std::int64_t stride,
                                         Tolerance tolerance, StreamRef stream);

}  // namespace cudakit::tunable::detail
