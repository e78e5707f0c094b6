#include "cudakit/tunable/tolerance.hpp"

#include <algorithm>
#include <cmath>

namespace cudakit::tunable {

// Note [GEMM tolerance]
// Default and a candidate multiply the same inputs; they differ in the order they add the k
// products (tiles, split-K, a reduction scheme) and in where they round. So:
// - rtol covers the output's own rounding, done once by each side: 2 units of its epsilon
//   (float16 2^-10, bfloat16 2^-7, float32 2^-23, float64 2^-52).
// - atol covers the summation order, scaled by the result's root-mean-square (an element near
//   zero from cancellation has an error the size of its terms, not of itself): a sum of k terms
//   reordered moves by about sqrt(k) units of the accumulator's epsilon; 4 sqrt(k) with room.
//   The accumulator is float32 for the float32/16 and bfloat16 GEMMs, float64 for float64, TF32's
//   10-bit mantissa when TF32 is allowed (the two sides may split products differently), and for
//   float8 Hopper's tensor cores accumulate at about 2^-13 unless fast accumulation is off.
// The allowance is loose against a wrong algorithm's error (a wrong result is off by the size of
// the result, ratio ~ 1/atol), tight against rounding.
Tolerance gemm_tolerance(const GemmKey& key) {
  const auto epsilon = [](GemmDType t) {
    switch (t) {
      case GemmDType::float16: return std::ldexp(1.0, -10);
      case GemmDType::bfloat16: return std::ldexp(1.0, -7);
      case GemmDType::float64: return std::ldexp(1.0, -52);
      case GemmDType::float8_e4m3: return std::ldexp(1.0, -3);
      case GemmDType::float8_e5m2: return std::ldexp(1.0, -2);
      case GemmDType::float32: break;
    }
    return std::ldexp(1.0, -23);
  };
  double accumulator = std::ldexp(1.0, -23);
  if (key.a_type == GemmDType::float64) accumulator = std::ldexp(1.0, -52);
  if (key.tf32) accumulator = std::ldexp(1.0, -10);
  if (key.op == GemmOp::scaled_gemm) accumulator = std::ldexp(1.0, -13);
  const double k = static_cast<double>(std::max<std::int64_t>(key.k, 1));
  Tolerance t;
  t.rtol = 2 * epsilon(key.c_type);
  t.atol = 4 * std::sqrt(k) * accumulator + 2 * epsilon(key.c_type);
  return t;
}

}  // namespace cudakit::tunable
