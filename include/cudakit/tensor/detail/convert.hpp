#pragma once
// Element conversions shared by host loops and kernels, torch's casts:
// - float16 and bfloat16 go through float with round-to-nearest-even (__float2half_rn /
//   __float2bfloat16_rn, the same bits on both sides);
// - the FP8 formats go through float. See Note [FP8 conversions];
// - a real value becomes a complex one with imaginary part 0; a complex one becomes a real one
//   by dropping its imaginary part (torch warns; cudakit does it quietly), or a bool by being
//   nonzero in either part;
// - bool is "!= 0"; the rest is static_cast.
// float4_e2m1fn_x2 has no conversions (storage only); callers refuse it before reaching here.

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

#include "cudakit/core/host_device.hpp"
#include "cudakit/tensor/detail/float8.hpp"
#include "cudakit/tensor/element_types.hpp"

namespace cudakit::tensor::detail {

template <class T>
inline constexpr bool is_reduced_float_v =
    std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>;
template <class T>
inline constexpr bool is_float8_v = std::is_same_v<T, float8_e4m3fn> ||
                                    std::is_same_v<T, float8_e5m2> ||
                                    std::is_same_v<T, float8_e8m0fnu>;
template <class T>
inline constexpr bool is_complex_v = std::is_same_v<T, complex64> || std::is_same_v<T, complex128>;

// The type arithmetic on T is done in: float for the 16-bit floats, T itself otherwise.
template <class T>
using compute_t = std::conditional_t<is_reduced_float_v<T>, float, T>;

template <class T>
CUDAKIT_HD_INLINE float float8_to_float(T x) {
  if constexpr (std::is_same_v<T, float8_e4m3fn>) return e4m3fn_to_float(x.bits);
  else if constexpr (std::is_same_v<T, float8_e5m2>) return e5m2_to_float(x.bits);
  else return e8m0fnu_to_float(x.bits);
}
template <class T>
CUDAKIT_HD_INLINE T float8_from_float(float x) {
  if constexpr (std::is_same_v<T, float8_e4m3fn>) return T{float_to_e4m3fn(x)};
  else if constexpr (std::is_same_v<T, float8_e5m2>) return T{float_to_e5m2(x)};
  else return T{float_to_e8m0fnu(x)};
}

template <class To, class From>
CUDAKIT_HD_INLINE To convert(From x) {
  if constexpr (std::is_same_v<To, From>) {
    return x;
  } else if constexpr (is_complex_v<From>) {
    if constexpr (is_complex_v<To>) {
      using Part = decltype(To{}.re);
      return To{static_cast<Part>(x.re), static_cast<Part>(x.im)};
    } else if constexpr (std::is_same_v<To, bool>) {
      return x.re != 0 || x.im != 0;
    } else {
      return convert<To>(x.re);
    }
  } else if constexpr (std::is_same_v<From, __half>) {
    return convert<To>(__half2float(x));
  } else if constexpr (std::is_same_v<From, __nv_bfloat16>) {
    return convert<To>(__bfloat162float(x));
  } else if constexpr (is_float8_v<From>) {
    return convert<To>(float8_to_float(x));
  } else if constexpr (is_complex_v<To>) {
    using Part = decltype(To{}.re);
    return To{convert<Part>(x), Part(0)};
  } else if constexpr (is_float8_v<To>) {
    return float8_from_float<To>(convert<float>(x));
  } else if constexpr (std::is_same_v<To, __half>) {
    return __float2half_rn(static_cast<float>(x));
  } else if constexpr (std::is_same_v<To, __nv_bfloat16>) {
    return __float2bfloat16_rn(static_cast<float>(x));
  } else if constexpr (std::is_same_v<To, bool>) {
    return x != From(0);
  } else {
    return static_cast<To>(x);
  }
}

}  // namespace cudakit::tensor::detail
