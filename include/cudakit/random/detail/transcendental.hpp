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
// Q a polynomial interpolating at Chebyshev nodes (tools: 90-digit Decimal arithmetic, see
// notes/tensor_random.md): degree 9 for float (max error 1.46 ulp, measured over every float in
// (0, 1)), degree 22 for double (1.2 ulp over 2e7 samples).
//
// sin and cos of 2*pi*u/2^32 for a random word u, in half turns: with t = (int32)(u << 1) / 2^32
// in [-1/2, 1/2] (one exact-enough int-to-float conversion, rounded to nearest on both sides),
// the angle is pi*t or pi*t + pi, the latter when the top two bits of u differ; there both sine
// and cosine change sign, which Box-Muller folds into the radius with one XOR
// (half_turn_flip). On |t| <= 1/2,
//   sin(pi t) = t * S(t^2),  cos(pi t) = C(t^2),
// S of degree 4 and C of degree 5 in t^2 for float, 9 and 10 for double. No quadrant logic, no
// division, no table, no branch.
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
  const float q = poly(f, 1.44269504e+00f, -7.21347354e-01f, 4.80898520e-01f, -3.60696542e-01f,
                       2.88552561e-01f, -2.39608122e-01f, 2.04857648e-01f, -1.91388377e-01f,
                       1.84760334e-01f, -1.07497894e-01f);
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

// sin(pi t) and cos(pi t) for t = (signed)(u << 1) / 2^bits in [-1/2, 1/2]: the sine and cosine
// of the angle 2 pi u / 2^bits, both negated when half_turn_flip(u) is set
// (See Note [Transcendental design]).
CUDAKIT_HD_INLINE SinCos<float> sincos_half_turn(std::uint32_t u) {
  const float t = mul(static_cast<float>(static_cast<std::int32_t>(u << 1)), 0x1p-32f);
  const float t2 = mul(t, t);
  const float s = mul(t, poly(t2, 3.1415926400772034021713353e+00f, -5.1677100766683148336255726e+00f,
                              2.5500773865289119157750974e+00f, -5.9829041128342752564606144e-01f,
                              7.7655912276013872030944185e-02f));
  const float c = poly(t2, 9.9999999977915399185235401e-01f, -4.9348021369289458704088247e+00f,
                       4.0587091547631342081103867e+00f, -1.3352119493905503233577292e+00f,
                       2.3493706859508650675039121e-01f, -2.4395932097550445533107322e-02f);
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

// The sign bit (as a mask) by which sincos_half_turn's values must be negated: set when the
// angle lies in the half turn opposite to t's, i.e. when the top two bits of u differ.
CUDAKIT_HD_INLINE std::uint32_t half_turn_flip(std::uint32_t u) { return (u ^ (u << 1)) & 0x80000000u; }
CUDAKIT_HD_INLINE std::uint64_t half_turn_flip(std::uint64_t u) {
  return (u ^ (u << 1)) & 0x8000000000000000ull;
}

}  // namespace cudakit::random::detail
