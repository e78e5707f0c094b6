#pragma once
// @brief How far a candidate's GEMM result may be from Default's and still count as the same answer.
// See Note [GEMM tolerance] in src/tunable/tolerance.cpp.

#include <cstdint>
#include <limits>

#include "cudakit/core/host_device.hpp"
#include "cudakit/tunable/gemm_key.hpp"

namespace cudakit::tunable {

// An element passes when |x - ref| <= rtol * |ref| + atol * rms(ref).
struct Tolerance {
  double rtol = 0;  // allowed difference relative to the reference element itself
  double atol = 0;  // allowed difference relative to the reference's root-mean-square
};

// The tolerance for a key's output (its dtypes, TF32, k). See Note [GEMM tolerance].
// @param key the GEMM whose outputs are compared
// @return rtol for the output's rounding and atol for the summation order.
[[nodiscard]] Tolerance gemm_tolerance(const GemmKey& key);

// How much of its allowance an element uses: <= 1 passes; NaN where exactly one of the two is
// NaN (or infinite), which fails every comparison. Callable on the host and in kernels.
// @param x the candidate's element
// @param ref Default's element
// @param rms_ref the root-mean-square of Default's output
// @param t the tolerance
// @return |x - ref| / (rtol |ref| + atol rms_ref); 0 for equal non-finite values, 1e300 for a
//   difference where nothing is allowed.
CUDAKIT_HD_INLINE double tolerance_ratio(double x, double ref, double rms_ref, Tolerance t) {
  const bool x_finite = x - x == 0, ref_finite = ref - ref == 0;
  if (!x_finite || !ref_finite) return (x == ref) ? 0.0 : std::numeric_limits<double>::quiet_NaN();
  const double diff = x > ref ? x - ref : ref - x;
  const double allowed = t.rtol * (ref < 0 ? -ref : ref) + t.atol * rms_ref;
  if (allowed <= 0) return diff == 0 ? 0.0 : 1e300;
  return diff / allowed;
}

}  // namespace cudakit::tunable
