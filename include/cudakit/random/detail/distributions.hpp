#pragma once
// The distributions: each turns the 128 bits of one Philox call into kPerCall values of T.
// Shared by the CPU reference path and the kernels (See Note [Host-device bit identity]); also
// usable from user kernels that want cudakit's exact sequences.
//
// Note [Uniform bits to floats]
// Unit uniforms take the top bits that fit the mantissa of T: 24 for float32, 11 for float16,
// 8 for bfloat16, 53 (from two words) for float64, scaled by a power of two: values k * 2^-bits
// in [0, 1), every one exactly representable, so a rounding can never reach 1. Box-Muller and
// exponential need (0, 1] with full relative precision near 0 (that is where the tails come
// from): u = word * 2^-32 + 2^-33, i.e. fma(float(word), 2^-32, 2^-33) (one conversion rounded to
// nearest, then one fma): smallest value 2^-33, so |normal| reaches 6.76 (torch's float normal:
// 6.66). For double, u = (word + 1/2) * 2^-64 built from two exact mantissa pieces (no uint64 to
// double conversion, whose rounding on the host is compiler-generated code): smallest 2^-65,
// |normal| up to 9.49.

#include <cstdint>
#include <type_traits>

#include "cudakit/random/detail/exact_float.hpp"
#include "cudakit/random/detail/philox.hpp"
#include "cudakit/random/detail/transcendental.hpp"
#include "cudakit/tensor/detail/convert.hpp"

namespace cudakit::random::detail {

using tensor::detail::convert;

// float for float32/float16/bfloat16, double for float64.
template <class T>
using real_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

// Values of T per Philox call: four for 32-bit words, two where a value takes 64 bits.
template <class T>
inline constexpr int kWordsPerCall = sizeof(T) == 8 ? 2 : 4;

CUDAKIT_HD_INLINE std::uint64_t join(std::uint32_t hi, std::uint32_t lo) {
  return (static_cast<std::uint64_t>(hi) << 32) | lo;
}

// [0, 1) on T's mantissa grid (Note [Uniform bits to floats]). For float64, `lo` holds the
// second word.
template <class T>
CUDAKIT_HD_INLINE real_t<T> unit_uniform(std::uint32_t word, std::uint32_t lo = 0) {
  if constexpr (std::is_same_v<T, double>) {
    return mul(static_cast<double>(join(word, lo) >> 11), 0x1p-53);
  } else if constexpr (std::is_same_v<T, __half>) {
    return mul(static_cast<float>(word >> 21), 0x1p-11f);
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return mul(static_cast<float>(word >> 24), 0x1p-8f);
  } else {
    return mul(static_cast<float>(word >> 8), 0x1p-24f);
  }
}

// word * 2^-32 + 2^-33 in (0, 1] (Note [Uniform bits to floats]).
CUDAKIT_HD_INLINE float open_unit(std::uint32_t word) {
  return fma(static_cast<float>(word), 0x1p-32f, 0x1p-33f);
}
// The same with the word converted rounding toward zero: in (0, 1), never 1 (the largest value
// is 1 - 2^-24), so that -log2 of it is a positive normal float (See Note [Box-Muller radius]).
CUDAKIT_HD_INLINE float open_unit_below_one(std::uint32_t word) {
  return fma(uint_to_float_rz(word), 0x1p-32f, 0x1p-33f);
}
CUDAKIT_HD_INLINE double open_unit(std::uint64_t word) {
  const double hi = sub(bits_to_double(0x3ff0000000000000ull | (word >> 12)), 1.0);
  const double lo =
      sub(bits_to_double(0x3ff0008000000000ull | ((word & 0xfffull) << 40)), 1.0);
  return fma(lo, 0x1p-52, hi);
}

template <class T>
struct Uniform {
  using value_type = T;
  static constexpr int kPerCall = kWordsPerCall<T>;
  real_t<T> from, range, to;

  CUDAKIT_HD_INLINE T value(real_t<T> unit) const {
    const T v = convert<T>(fma(unit, range, from));
    // A rounding may land on `to`; the interval is half-open (torch maps it to `from` too).
    return convert<real_t<T>>(v) >= to ? convert<T>(from) : v;
  }
  CUDAKIT_HD_INLINE void operator()(PhiloxWords w, T* out) const {
    if constexpr (kPerCall == 2) {
      out[0] = value(unit_uniform<T>(w.x, w.y));
      out[1] = value(unit_uniform<T>(w.z, w.w));
    } else {
      out[0] = value(unit_uniform<T>(w.x));
      out[1] = value(unit_uniform<T>(w.y));
      out[2] = value(unit_uniform<T>(w.z));
      out[3] = value(unit_uniform<T>(w.w));
    }
  }
};

// Box-Muller: radius sqrt(-2 ln u1) = sqrt(-2 ln2 * log2 u1), angle 2 pi u2; two normals per
// (u1, u2) pair: mean + (std * radius) * (cos, sin). The half-turn sign of the angle is folded
// into the radius; kStandard (mean 0, std 1) skips the scaling.
//
// Note [Box-Muller radius]
// float: u1 = open_unit_below_one(word) < 1, so x = -log2 u1 lies in [8.6e-8, 33], inside
// sqrt_unchecked's range [2^-101, FLT_MAX]; the radius's constant
// k = sqrt(2 ln 2) is folded into scaled_sincos_half_turn's coefficients, so the radius costs
// the log2, one MUFU.RSQ and four FMA-pipe instructions. Together with the warp tiles of the
// kernel (Note [Warp tiles]) this took randn from ~151 to ~120 instructions per Philox call
// (notes/tensor_random.md). double: sqrt(-2 ln2 * log2 u1) with the correctly rounded sqrt.
// radius * (sin, cos), or mean + (std * radius) * (sin, cos).
template <bool kStandard, class R>
CUDAKIT_HD_INLINE SinCos<R> scale_pair(R radius, SinCos<R> sc, R mean, R std) {
  if constexpr (kStandard) {
    return SinCos<R>{mul(radius, sc.sin), mul(radius, sc.cos)};
  } else {
    const R scaled = mul(radius, std);
    return SinCos<R>{fma(scaled, sc.sin, mean), fma(scaled, sc.cos, mean)};
  }
}

template <bool kStandard = true>
CUDAKIT_HD_INLINE SinCos<float> box_muller(std::uint32_t radius_word, std::uint32_t angle_word,
                                           float mean = 0.0f, float std = 1.0f) {
  const float root = sqrt_unchecked(-log2_positive(open_unit_below_one(radius_word)));
  return scale_pair<kStandard>(flip_sign(root, half_turn_flip(angle_word)),
                               scaled_sincos_half_turn(angle_word), mean, std);
}
template <bool kStandard = true>
CUDAKIT_HD_INLINE SinCos<double> box_muller(std::uint64_t radius_word, std::uint64_t angle_word,
                                            double mean = 0.0, double std = 1.0) {
  const double minus_two_ln2 = -1.38629436111989061883446424291635313;
  const double root = sqrt(mul(minus_two_ln2, log2_positive(open_unit(radius_word))));
  return scale_pair<kStandard>(flip_sign(root, half_turn_flip(angle_word)),
                               sincos_half_turn(angle_word), mean, std);
}

// normal_(mean, std); kStandard when (mean, std) == (0, 1), chosen by value by with_distribution
// on both paths, so a standard draw never depends on which version ran.
template <class T, bool kStandard = false>
struct Normal {
  using value_type = T;
  static constexpr int kPerCall = kWordsPerCall<T>;
  real_t<T> mean, std;

  CUDAKIT_HD_INLINE void operator()(PhiloxWords w, T* out) const {
    if constexpr (kPerCall == 2) {
      const SinCos<double> z =
          box_muller<kStandard>(join(w.x, w.y), join(w.z, w.w), double(mean), double(std));
      out[0] = convert<T>(z.cos);
      out[1] = convert<T>(z.sin);
    } else {
      const SinCos<float> z0 = box_muller<kStandard>(w.x, w.y, mean, std);
      const SinCos<float> z1 = box_muller<kStandard>(w.z, w.w, mean, std);
      out[0] = convert<T>(z0.cos);
      out[1] = convert<T>(z0.sin);
      out[2] = convert<T>(z1.cos);
      out[3] = convert<T>(z1.sin);
    }
  }
};

// -ln(u) / lambda = log2(u) * (-ln2 / lambda); `scale` holds -ln2 / lambda.
template <class T>
struct Exponential {
  using value_type = T;
  static constexpr int kPerCall = kWordsPerCall<T>;
  real_t<T> scale;

  template <class Word>
  CUDAKIT_HD_INLINE T value(Word word) const {
    // + 0 turns the -0 of u == 1 into +0.
    return convert<T>(add(mul(log2_positive(open_unit(word)), scale), real_t<T>(0)));
  }
  CUDAKIT_HD_INLINE void operator()(PhiloxWords w, T* out) const {
    if constexpr (kPerCall == 2) {
      out[0] = value(join(w.x, w.y));
      out[1] = value(join(w.z, w.w));
    } else {
      out[0] = value(w.x);
      out[1] = value(w.y);
      out[2] = value(w.z);
      out[3] = value(w.w);
    }
  }
};

// 1 with probability p: word < p * 2^32 (`threshold`, up to 2^32 for p == 1).
template <class T>
struct Bernoulli {
  using value_type = T;
  static constexpr int kPerCall = 4;
  std::uint64_t threshold;

  CUDAKIT_HD_INLINE T value(std::uint32_t word) const {
    return convert<T>(static_cast<int>(word < threshold));
  }
  CUDAKIT_HD_INLINE void operator()(PhiloxWords w, T* out) const {
    out[0] = value(w.x);
    out[1] = value(w.y);
    out[2] = value(w.z);
    out[3] = value(w.w);
  }
};

CUDAKIT_HD_INLINE std::uint64_t mulhi64(std::uint64_t a, std::uint64_t b) {
#if defined(__CUDA_ARCH__)
  return __umul64hi(a, b);
#else
  __extension__ using u128 = unsigned __int128;
  return static_cast<std::uint64_t>((static_cast<u128>(a) * b) >> 64);
#endif
}

// Integers in [low, low + range): floor(word * range / 2^bits) (Lemire's multiply, without the
// rejection step: a bias below range / 2^32, resp. range / 2^64). Ranges up to 2^32 take one word
// per value (kWide false), larger ones two.
template <class T, bool kWide>
struct RandomInt {
  using value_type = T;
  static constexpr int kPerCall = kWide ? 2 : 4;
  std::int64_t low;
  std::uint64_t range;

  CUDAKIT_HD_INLINE T value(std::uint64_t scaled) const {
    return convert<T>(static_cast<std::int64_t>(static_cast<std::uint64_t>(low) + scaled));
  }
  CUDAKIT_HD_INLINE void operator()(PhiloxWords w, T* out) const {
    if constexpr (kWide) {
      out[0] = value(mulhi64(join(w.x, w.y), range));
      out[1] = value(mulhi64(join(w.z, w.w), range));
    } else {
      out[0] = value((static_cast<std::uint64_t>(w.x) * range) >> 32);
      out[1] = value((static_cast<std::uint64_t>(w.y) * range) >> 32);
      out[2] = value((static_cast<std::uint64_t>(w.z) * range) >> 32);
      out[3] = value((static_cast<std::uint64_t>(w.w) * range) >> 32);
    }
  }
};

// 64-bit sort keys for randperm: element i goes where its key ranks (ties by index).
struct PermutationKey {
  using value_type = std::uint64_t;
  static constexpr int kPerCall = 2;
  CUDAKIT_HD_INLINE void operator()(PhiloxWords w, std::uint64_t* out) const {
    out[0] = join(w.x, w.y);
    out[1] = join(w.z, w.w);
  }
};

}  // namespace cudakit::random::detail
