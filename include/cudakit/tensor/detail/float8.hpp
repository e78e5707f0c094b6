#pragma once
// Bit-exact conversions between float and the FP8 formats, the same on the host and in kernels.
//
// Note [FP8 conversions]
// cudakit follows torch (c10/util/Float8_e4m3fn.h, Float8_e5m2.h, Float8_e8m0fnu.h), not the
// saturating hardware conversion, so that a checkpoint cast by cudakit holds torch's bytes:
// - Everything converts through float: a double (or int64) is rounded to float first, then to
//   FP8, as torch's Float8 constructors take a float.
// - float -> float8_e4m3fn: round to nearest, ties to even, over the whole range (subnormals
//   included). No saturation: |x| >= 480 (the first value past 448 that is not a tie back to
//   it), infinities and NaN give NaN (0x7f, with x's sign), since the format has no infinity;
//   values in (464, 480) round to the bit pattern 0x7f, which is NaN too.
// - float -> float8_e5m2: the same rounding; |x| >= 65536 and infinities give infinity (0x7c
//   with x's sign), values from 61440 up round to it; NaN gives 0x7f with x's sign.
// - float -> float8_e8m0fnu: the sign is ignored; the exponent of |x| is kept and rounded up
//   by the mantissa's guard bit when the round or sticky bits or the implied leading one are
//   set (torch's rule, so 1.5 -> 2, 3 -> 4, 0.75 -> 1); 0 and float subnormals below 2^-127
//   give 2^-127 (bits 0); NaN and infinities give NaN (0xff), as does a value rounding past
//   2^127.
// - float8 -> float is exact; NaN patterns become the float NaNs torch makes (0x7ff00000 with
//   the sign for e4m3fn; the payload shifted up for e5m2; 0x7f800001 for e8m0fnu), and e8m0fnu's
//   bits 0 are 2^-127, a float subnormal.

#include <cstdint>
#include <cstring>

#include "cudakit/core/host_device.hpp"

namespace cudakit::tensor::detail {

CUDAKIT_HD_INLINE std::uint32_t float_bits(float x) {
  std::uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits;
}
CUDAKIT_HD_INLINE float float_from_bits(std::uint32_t bits) {
  float x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

// |x|'s code in a format of kMantissa stored mantissa bits and exponent bias kBias, rounded to
// nearest even, where a result past the format's largest exponent field simply carries on
// upwards (the callers bound the input first). `magnitude` is float bits without the sign.
template <int kMantissa, int kBias>
CUDAKIT_HD_INLINE std::uint32_t round_to_small_float(std::uint32_t magnitude) {
  const std::uint32_t field = magnitude >> 23;
  const std::uint32_t significand = field != 0 ? (magnitude & 0x7fffffu) | 0x800000u : magnitude & 0x7fffffu;
  const int exponent = (field != 0 ? static_cast<int>(field) : 1) - 127;  // of the leading bit
  const int min_exponent = 1 - kBias;  // the format's smallest normal exponent
  const int target = exponent > min_exponent ? exponent : min_exponent;
  // Bits of the 24-bit significand below the target's last mantissa bit.
  const int drop = 23 - kMantissa + (target - exponent);
  if (drop > 25) return 0;  // below half the smallest subnormal
  const std::uint32_t kept = significand >> drop;
  const std::uint32_t rest = significand & ((1u << drop) - 1);
  const std::uint32_t half = 1u << (drop - 1);
  const std::uint32_t rounded = kept + ((rest > half || (rest == half && (kept & 1u))) ? 1u : 0u);
  // Subnormal codes are the count of quanta; a normal's exponent field is added to the
  // significand with its leading one, which carries a rounding overflow into the exponent.
  return (static_cast<std::uint32_t>(target - min_exponent) << kMantissa) + rounded;
}

CUDAKIT_HD_INLINE std::uint8_t float_to_e4m3fn(float x) {
  const std::uint32_t bits = float_bits(x);
  const std::uint32_t sign = (bits >> 24) & 0x80u;
  const std::uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude >= 0x43f00000u) return static_cast<std::uint8_t>(sign | 0x7fu);  // >= 480, inf, NaN
  return static_cast<std::uint8_t>(sign | round_to_small_float<3, 7>(magnitude));
}

CUDAKIT_HD_INLINE std::uint8_t float_to_e5m2(float x) {
  const std::uint32_t bits = float_bits(x);
  const std::uint32_t sign = (bits >> 24) & 0x80u;
  const std::uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return static_cast<std::uint8_t>(sign | 0x7fu);           // NaN
  if (magnitude >= 0x47800000u) return static_cast<std::uint8_t>(sign | 0x7cu);          // >= 65536, inf
  return static_cast<std::uint8_t>(sign | round_to_small_float<2, 15>(magnitude));
}

CUDAKIT_HD_INLINE std::uint8_t float_to_e8m0fnu(float x) {
  const std::uint32_t bits = float_bits(x);
  std::uint32_t exponent = (bits >> 23) & 0xffu;
  if (exponent == 0xffu) return 0xff;
  const bool guard = (bits & 0x400000u) != 0;
  const bool round_or_sticky = (bits & 0x3fffffu) != 0;
  const bool leading_one = exponent != 0;
  if (guard && (round_or_sticky || leading_one)) ++exponent;
  return static_cast<std::uint8_t>(exponent);
}

CUDAKIT_HD_INLINE float e4m3fn_to_float(std::uint8_t code) {
  const std::uint32_t sign = static_cast<std::uint32_t>(code & 0x80u) << 24;
  const std::uint32_t exponent = (code >> 3) & 0xfu;
  const std::uint32_t mantissa = code & 0x7u;
  if ((code & 0x7fu) == 0x7fu) return float_from_bits(sign | 0x7ff00000u);
  if (exponent == 0) {
    const float value = static_cast<float>(mantissa) * 0.001953125f;  // 2^-9, exact
    return (code & 0x80u) ? -value : value;
  }
  return float_from_bits(sign | ((exponent + 120u) << 23) | (mantissa << 20));
}

CUDAKIT_HD_INLINE float e5m2_to_float(std::uint8_t code) {
  const std::uint32_t sign = static_cast<std::uint32_t>(code & 0x80u) << 24;
  const std::uint32_t exponent = (code >> 2) & 0x1fu;
  const std::uint32_t mantissa = code & 0x3u;
  if (exponent == 0x1fu) return float_from_bits(sign | 0x7f800000u | (mantissa << 21));
  if (exponent == 0) {
    const float value = static_cast<float>(mantissa) * 1.52587890625e-05f;  // 2^-16, exact
    return (code & 0x80u) ? -value : value;
  }
  return float_from_bits(sign | ((exponent + 112u) << 23) | (mantissa << 21));
}

CUDAKIT_HD_INLINE float e8m0fnu_to_float(std::uint8_t code) {
  if (code == 0) return float_from_bits(0x00400000u);  // 2^-127
  if (code == 0xff) return float_from_bits(0x7f800001u);
  return float_from_bits(static_cast<std::uint32_t>(code) << 23);
}

}  // namespace cudakit::tensor::detail
