#pragma once
// Floating-point primitives that round identically on the host and on the device.
//
// Note [Host-device bit identity]
// IEEE 754 makes +, -, *, fma, and sqrt correctly rounded, so they give the same bits on any
// conforming hardware — provided the compiler emits exactly the operations the source names.
// Two things break that: (1) contraction: nvcc fuses a*b+c into one FFMA by default (-fmad=true),
// g++ may do so with -ffp-contract=fast and an FMA target, and the two rarely fuse the same
// expressions; (2) library functions (logf, sincosf, __logf, ...) whose device and glibc
// implementations differ in the last bits. The code shared by the CPU reference path and the
// kernels therefore uses only the functions below: mul/add/sub are __fmul_rn/__fadd_rn/... on
// the device, which nvcc never contracts, and plain operators on the host (where there is nothing
// to fuse with once every multiply-add is written as an explicit fma); fma is the fused operation
// on both sides; sqrt is __fsqrt_rn/__dsqrt_rn (IEEE even under --use_fast_math) and std::sqrt.
// Subnormals: the values reaching these functions are never subnormal, so flush-to-zero settings
// cannot matter either. Integer<->float conversions used are exact (|value| < 2^24 or 2^53).

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "cudakit/core/host_device.hpp"

namespace cudakit::random::detail {

CUDAKIT_HD_INLINE float bits_to_float(std::uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
#endif
}
CUDAKIT_HD_INLINE std::uint32_t float_to_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
#endif
}
CUDAKIT_HD_INLINE double bits_to_double(std::uint64_t u) {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(static_cast<long long>(u));
#else
  double d;
  std::memcpy(&d, &u, sizeof d);
  return d;
#endif
}
CUDAKIT_HD_INLINE std::uint64_t double_to_bits(double d) {
#if defined(__CUDA_ARCH__)
  return static_cast<std::uint64_t>(__double_as_longlong(d));
#else
  std::uint64_t u;
  std::memcpy(&u, &d, sizeof u);
  return u;
#endif
}

// See Note [Host-device bit identity].
CUDAKIT_HD_INLINE float mul(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
CUDAKIT_HD_INLINE double mul(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
CUDAKIT_HD_INLINE float add(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
CUDAKIT_HD_INLINE double add(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}
CUDAKIT_HD_INLINE float sub(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}
CUDAKIT_HD_INLINE double sub(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dsub_rn(a, b);
#else
  return a - b;
#endif
}
CUDAKIT_HD_INLINE float fma(float a, float b, float c) {
#if defined(__CUDA_ARCH__)
  return __fmaf_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}
CUDAKIT_HD_INLINE double fma(double a, double b, double c) {
#if defined(__CUDA_ARCH__)
  return __fma_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}
CUDAKIT_HD_INLINE float sqrt(float a) {
#if defined(__CUDA_ARCH__)
  return __fsqrt_rn(a);
#else
  return std::sqrt(a);
#endif
}
CUDAKIT_HD_INLINE double sqrt(double a) {
#if defined(__CUDA_ARCH__)
  return __dsqrt_rn(a);
#else
  return std::sqrt(a);
#endif
}

// The square root of x in [2^-101, FLT_MAX], correctly rounded like sqrt() above. On the device
// this is __fsqrt_rn's fast path without its range check: the approximate reciprocal square
// root y (MUFU.RSQ), s = x*y, then one correction s + (x - s*s) * y/2 -- the sequence nvcc emits
// for __fsqrt_rn on exactly that range (it branches to a slow path below 2^-101, for zero,
// infinity and NaN), which rounds correctly whatever y's last bits are (the GPU tier checks
// every float of the range against __fsqrt_rn). Dropping the check saves five instructions and
// a branch per call in the Box-Muller loop; callers guarantee the range.
CUDAKIT_HD_INLINE float sqrt_unchecked(float x) {
#if defined(__CUDA_ARCH__)
  float y;
  asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  const float s = __fmul_rn(x, y);
  const float half_y = __fmul_rn(y, 0.5f);
  return __fmaf_rn(__fmaf_rn(-s, s, x), half_y, s);
#else
  return std::sqrt(x);
#endif
}

// A 32-bit unsigned integer converted to float rounding toward zero (the top 24 significant
// bits): cvt.rz on the device, exact integer masking then an exact conversion on the host.
CUDAKIT_HD_INLINE float uint_to_float_rz(std::uint32_t w) {
#if defined(__CUDA_ARCH__)
  return __uint2float_rz(w);
#else
  const int width = std::bit_width(w);
  const std::uint32_t dropped = width > 24 ? (1u << (width - 24)) - 1u : 0u;
  return static_cast<float>(w & ~dropped);
#endif
}

// x with its sign bit XORed with `mask` (0 or the sign bit): an integer op, never a rounding.
CUDAKIT_HD_INLINE float flip_sign(float x, std::uint32_t mask) {
  return bits_to_float(float_to_bits(x) ^ mask);
}
CUDAKIT_HD_INLINE double flip_sign(double x, std::uint64_t mask) {
  return bits_to_double(double_to_bits(x) ^ mask);
}

// c0 + x*(c1 + x*(c2 + ...)) by Horner's rule, every step one fma.
template <class T>
CUDAKIT_HD_INLINE T poly(T, T c0) {
  return c0;
}
template <class T, class... Cs>
CUDAKIT_HD_INLINE T poly(T x, T c0, Cs... cs) {
  return fma(poly(x, static_cast<T>(cs)...), x, c0);
}

}  // namespace cudakit::random::detail
