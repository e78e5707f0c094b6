#pragma once
// log2 and sin/cos for the random transforms, written once for host and device out of the
// operations of exact_float.hpp, so that the CPU reference path and the kernels agree bit for
// bit (See Note [Host-device bit identity]). See Note [Transcendental design].

#include <cstdint>

#include "cudakit/random/detail/exact_float.hpp"

namespace cudakit::random::detail {

// Note [Transcendental design]
// log2(x), x a positive normal number: x = 2^e * m with m in [sqrt(1/2), sqrt(2)), found with
// integer operations on the bits; f = m - 1 is exact (Sterbenz), and
//   log2(x) = e + f * Q(f),   Q(f) ~ log2(1 + f) / f on [-0.2929, 0.4142],
// Q a near-minimax polynomial (Chebyshev fit, tools/dev/random_coefficients.py): degree 7 for
// float (Q's fit error 2.2e-7 relative; every float in (0, 1) is checked by the host tier),
// degree 22 for double (1.2 ulp over 2e7 samples). Degree 7 rather than 9: two FFMA less per
// Box-Muller pair, ~2% of randn's time (notes/tensor_random.md), for an error far below anything
// a statistical test of the outputs could see.
//
// sin and cos of 2*pi*u/2^32 for a random word u, in half turns: with t = (int32)(u << 1) / 2^32
// in [-1/2, 1/2] (one exact-enough int-to-float conversion, rounded to nearest on both sides),
// the angle is pi*t, or pi*t + pi when u's top bit (unused by t) is set; there both sine and
// cosine change sign, which Box-Muller folds into the radius (half_turn_flip: one LOP3 with the
// radius's sign). On |t| <= 1/2,
//   sin(pi t) = t * S(t^2),  cos(pi t) = C(t^2),
// S and C of degree 4 in t^2 for float (times sqrt(2 ln 2), see scaled_sincos_half_turn), 9 and
// 10 for double. No quadrant logic, no division, no table, no branch.
//
// Note [Instruction budget]
// On Hopper, integer and logic instructions (LOP3, IADD3, SHF, ISETP, ...) issue at half the
// rate of FFMA/FMUL/FADD, and Philox already spends 20 LOP3 per call. The transforms are
// therefore written to put their work on the FMA pipe: range reduction by int-to-float
// conversions and multiplications rather than masks and selects, signs folded into one XOR.
// notes/tensor_random.md has the SASS counts.

// log2 of a positive normal float.
CUDAKIT_HD_INLINE float log2_positive(float x) {
  const std::uint32_t ix = float_to_bits(x);
  const std::int32_t e = static_cast<std::int32_t>(ix - 0x3f3504f3u) >> 23;  // 0x3f3504f3: sqrt(1/2)
  const float m = bits_to_float(ix - (static_cast<std::uint32_t>(e) << 23));
  const float f = sub(m, 1.0f);
  const float ef = static_cast<float>(e);  // exact; one I2FP, no integer add
  const float q = poly(f, 1.4426949948930466f, -7.2135293136297414e-1f, 4.8091670800022001e-1f,
                       -3.6022518246098943e-1f, 2.8728888237397461e-1f, -2.4927182207491368e-1f,
                       2.3265257882113623e-1f, -1.4275973435991977e-1f);
  return fma(f, q, ef);
}

// log2 of a positive normal double.
CUDAKIT_HD_INLINE double log2_positive(double x) {
  const std::uint64_t ix = double_to_bits(x);
  const std::int64_t e =
      static_cast<std::int64_t>(ix - 0x3fe6a09e667f3bcdull) >> 52;  // sqrt(1/2)
  const double m = bits_to_double(ix - (static_cast<std::uint64_t>(e) << 52));
  const double f = sub(m, 1.0);
  const double ef = static_cast<double>(e);
  const double q = poly(
      f, 1.4426950408889633870046509e+00, -7.2134752044448169350232547e-01,
      4.8089834696298827676486098e-01, -3.6067376022225122733644298e-01,
      2.8853900817763844521834926e-01, -2.4044917347910751970196941e-01,
      2.0609929157473919070220347e-01, -1.8033688036778172669727383e-01,
      1.6029944787012012641369552e-01, -1.4426948878731313263834579e-01,
      1.3115412592823266768604640e-01, -1.2022513415950090986950016e-01,
      1.1097628777450276038596400e-01, -1.0303755970891124993382704e-01,
      9.6171082717885922330758319e-02, -9.0330241051665066676079618e-02,
      8.5139340159990875567252999e-02, -7.8956260350268245296057046e-02,
      7.2570397933191602146685284e-02, -7.5297523700278798375329359e-02,
      8.7493925429968380513834347e-02, -7.7186164073978852373514314e-02,
      3.1622657375783930211454731e-02);
  return fma(f, q, ef);
}

template <class T>
struct SinCos {
  T sin, cos;
};

// sin(pi t) and cos(pi t) for t = (signed)(u << 1) / 2^bits in [-1/2, 1/2]: with the half turn
// chosen by u's top bit (half_turn_flip), the sine and cosine of a uniform angle
// (See Note [Transcendental design]).
//
// The float version returns them times k = sqrt(2 ln 2), the constant of the Box-Muller radius
// sqrt(-2 ln u) = k sqrt(-log2 u), folded into the coefficients (See Note [Box-Muller radius]):
// k sin(pi t) = t S(t^2), S of degree 4 (fit error 1.6e-8), k cos(pi t) = C(t^2), C of degree 4
// (5.5e-8).
CUDAKIT_HD_INLINE SinCos<float> scaled_sincos_half_turn(std::uint32_t u) {
  const float t = mul(static_cast<float>(static_cast<std::int32_t>(u << 1)), 0x1p-32f);
  const float t2 = mul(t, t);
  const float s = mul(t, poly(t2, 3.6989426610877495f, -6.0845136377234855f, 3.002486673089209f,
                              -7.0443312662001303e-1f, 9.1432849421361217e-2f));
  const float c = poly(t2, 1.177409967209597f, -5.8102745046883164f, 4.7784135405288355f,
                       -1.568160586877465f, 2.5865628728814003e-1f);
  return SinCos<float>{s, c};
}

CUDAKIT_HD_INLINE SinCos<double> sincos_half_turn(std::uint64_t u) {
  const double t = mul(static_cast<double>(static_cast<std::int64_t>(u << 1)), 0x1p-64);
  const double t2 = mul(t, t);
  const double s = mul(
      t, poly(t2, 3.1415926535897931159979635e+00, -5.1677127800499702559022808e+00,
              2.5501640398773455231662410e+00, -5.9926452932078688728978477e-01,
              8.2145886610993562593208139e-02, -7.3704309437021362644282263e-03,
              4.6630278745932727309936316e-04, -2.1915250301851374920046947e-05,
              7.9485390373723203700888351e-07, -2.2283712160696970262391958e-08));
  const double c = poly(
      t2, 1.0000000000000000000000000e+00, -4.9348022005446789961524701e+00,
      4.0587121264167684842050221e+00, -1.3352627688545894990568286e+00,
      2.3533063035889056902050243e-01, -2.5806891389964701361003918e-02,
      1.9295743088292205327100026e-03, -1.0463810062667314192998147e-04,
      4.3030489281910886846115212e-06, -1.3872781244548443474664406e-07,
      3.5003120737037621982704905e-09);
  return SinCos<double>{s, c};
}

// The sign bit (as a mask) by which sincos_half_turn's values are negated to reach the other
// half turn: u's top bit, which t = (signed)(u << 1) does not use.
CUDAKIT_HD_INLINE std::uint32_t half_turn_flip(std::uint32_t u) { return u & 0x80000000u; }
CUDAKIT_HD_INLINE std::uint64_t half_turn_flip(std::uint64_t u) { return u & 0x8000000000000000ull; }

}  // namespace cudakit::random::detail
