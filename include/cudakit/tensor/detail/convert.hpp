#pragma once
// Element conversions shared by host loops and kernels. float16 and bfloat16 go through float
// with round-to-nearest-even (__float2half_rn / __float2bfloat16_rn, the same bits on both
// sides); bool is "!= 0".

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

#include "cudakit/core/host_device.hpp"

namespace cudakit::tensor::detail {

template <class T>
inline constexpr bool is_reduced_float_v =
    std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>;

// The type arithmetic on T is done in: float for the 16-bit floats, T itself otherwise.
template <class T>
using compute_t = std::conditional_t<is_reduced_float_v<T>, float, T>;

template <class To, class From>
CUDAKIT_HD_INLINE To convert(From x) {
  if constexpr (std::is_same_v<To, From>) {
    return x;
  } else if constexpr (std::is_same_v<From, __half>) {
    return convert<To>(__half2float(x));
  } else if constexpr (std::is_same_v<From, __nv_bfloat16>) {
    return convert<To>(__bfloat162float(x));
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
