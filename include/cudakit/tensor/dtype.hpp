#pragma once
// @brief DType: the element types a Tensor can hold, with their sizes, names and C++ types.
//
// Note [Which dtypes compute]
// Every dtype has storage, empty/zeros/full, fill, copy and `to`, printing, DLPack and
// safetensors. Arithmetic (elementwise operations, sums, comparisons, matmul) runs on the
// "computing" dtypes: bool (comparisons only), the integers and float16/bfloat16/float32/
// float64. torch defines no arithmetic on FP8 (it casts to a wider type first) and cudakit
// none on complex yet; an operation given one of them throws InvalidArgumentError naming the
// operation and the dtype (check_computing). float4_e2m1fn_x2 (NVFP4's two values per byte) is
// storage only: copies, views, zeros, DLPack and safetensors, no casts, as in torch.

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "cudakit/tensor/element_types.hpp"

namespace cudakit::tensor {

// The first eight keep their values (results files and tests may hold them); new ones go last.
enum class DType : std::uint8_t {
  float32, float16, bfloat16, float64, int32, int64, uint8, bool_,
  int8, int16, uint16, uint32, uint64,
  float8_e4m3fn, float8_e5m2, float8_e8m0fnu,
  complex64, complex128,
  float4_e2m1fn_x2,
};
inline constexpr int kDTypeCount = 19;

// Bytes per element (float4_e2m1fn_x2: 1, a pair of values).
[[nodiscard]] std::size_t element_size(DType dtype) noexcept;
// "float32", "float16", ..., "bool", "float8_e4m3fn", "complex64", ... (torch's names).
[[nodiscard]] std::string_view dtype_name(DType dtype) noexcept;
// torch.is_floating_point: float16, bfloat16, float32, float64 and the three FP8 formats.
[[nodiscard]] bool is_floating(DType dtype) noexcept;
[[nodiscard]] bool is_float8(DType dtype) noexcept;
[[nodiscard]] bool is_complex(DType dtype) noexcept;
// bool and the signed and unsigned integers.
[[nodiscard]] bool is_integral(DType dtype) noexcept;
[[nodiscard]] bool is_unsigned(DType dtype) noexcept;
// Whether `dtype` takes arithmetic in cudakit. See Note [Which dtypes compute].
[[nodiscard]] bool is_computing(DType dtype) noexcept;
// @throws InvalidArgumentError naming `op` and the dtype when `dtype` does not compute.
void check_computing(DType dtype, const char* op);
// Whether a tensor of `from` converts to `to` (every pair but those with float4_e2m1fn_x2,
// which copies only to itself).
[[nodiscard]] bool can_cast(DType from, DType to) noexcept;
// The dtype both a and b convert to, by torch's rules (torch.promote_types): bool < the
// integers by rank (uint8 and int8 meet in int16) < the floating types < complex; float16 with
// bfloat16 gives float32; complex64 with float64 gives complex128.
// @throws InvalidArgumentError where torch refuses: two different FP8 formats or an FP8 and
// another dtype, uint16/uint32/uint64 with another dtype that is not floating, and
// float4_e2m1fn_x2 with anything else.
[[nodiscard]] DType promote_types(DType a, DType b);
// The dtype named `name` (as dtype_name spells it). @throws InvalidArgumentError for another name.
[[nodiscard]] DType parse_dtype(std::string_view name);

// The DType of a C++ element type: dtype_of<float> == DType::float32, ...
template <class T>
inline constexpr bool has_dtype = false;
template <class T>
inline constexpr DType dtype_of = DType::float32;
#define CUDAKIT_TENSOR_DTYPE_OF(type, value)      \
  template <>                                     \
  inline constexpr bool has_dtype<type> = true;   \
  template <>                                     \
  inline constexpr DType dtype_of<type> = DType::value;
CUDAKIT_TENSOR_DTYPE_OF(float, float32)
CUDAKIT_TENSOR_DTYPE_OF(__half, float16)
CUDAKIT_TENSOR_DTYPE_OF(__nv_bfloat16, bfloat16)
CUDAKIT_TENSOR_DTYPE_OF(double, float64)
CUDAKIT_TENSOR_DTYPE_OF(std::int32_t, int32)
CUDAKIT_TENSOR_DTYPE_OF(std::int64_t, int64)
CUDAKIT_TENSOR_DTYPE_OF(std::uint8_t, uint8)
CUDAKIT_TENSOR_DTYPE_OF(bool, bool_)
CUDAKIT_TENSOR_DTYPE_OF(std::int8_t, int8)
CUDAKIT_TENSOR_DTYPE_OF(std::int16_t, int16)
CUDAKIT_TENSOR_DTYPE_OF(std::uint16_t, uint16)
CUDAKIT_TENSOR_DTYPE_OF(std::uint32_t, uint32)
CUDAKIT_TENSOR_DTYPE_OF(std::uint64_t, uint64)
CUDAKIT_TENSOR_DTYPE_OF(float8_e4m3fn, float8_e4m3fn)
CUDAKIT_TENSOR_DTYPE_OF(float8_e5m2, float8_e5m2)
CUDAKIT_TENSOR_DTYPE_OF(float8_e8m0fnu, float8_e8m0fnu)
CUDAKIT_TENSOR_DTYPE_OF(complex64, complex64)
CUDAKIT_TENSOR_DTYPE_OF(complex128, complex128)
CUDAKIT_TENSOR_DTYPE_OF(float4_e2m1fn_x2, float4_e2m1fn_x2)
#undef CUDAKIT_TENSOR_DTYPE_OF

namespace detail {
[[noreturn]] void refuse_dtype(DType dtype, const char* what);
}  // namespace detail

// Calls f.template operator()<T>() with T the C++ type of `dtype`, for the computing dtypes.
// @throws InvalidArgumentError for another dtype (operations check first, naming themselves).
template <class F>
decltype(auto) visit_dtype(DType dtype, F&& f) {
  switch (dtype) {
    case DType::float32: return f.template operator()<float>();
    case DType::float16: return f.template operator()<__half>();
    case DType::bfloat16: return f.template operator()<__nv_bfloat16>();
    case DType::float64: return f.template operator()<double>();
    case DType::int32: return f.template operator()<std::int32_t>();
    case DType::int64: return f.template operator()<std::int64_t>();
    case DType::uint8: return f.template operator()<std::uint8_t>();
    case DType::int8: return f.template operator()<std::int8_t>();
    case DType::int16: return f.template operator()<std::int16_t>();
    case DType::uint16: return f.template operator()<std::uint16_t>();
    case DType::uint32: return f.template operator()<std::uint32_t>();
    case DType::uint64: return f.template operator()<std::uint64_t>();
    case DType::bool_: return f.template operator()<bool>();
    default: break;
  }
  detail::refuse_dtype(dtype, "this operation");
}

// visit_dtype over every dtype that converts: the computing ones, FP8 and complex (all but
// float4_e2m1fn_x2). @throws InvalidArgumentError for float4_e2m1fn_x2.
template <class F>
decltype(auto) visit_convertible_dtype(DType dtype, F&& f) {
  switch (dtype) {
    case DType::float8_e4m3fn: return f.template operator()<float8_e4m3fn>();
    case DType::float8_e5m2: return f.template operator()<float8_e5m2>();
    case DType::float8_e8m0fnu: return f.template operator()<float8_e8m0fnu>();
    case DType::complex64: return f.template operator()<complex64>();
    case DType::complex128: return f.template operator()<complex128>();
    case DType::float4_e2m1fn_x2: detail::refuse_dtype(dtype, "a conversion");
    default: break;
  }
  return visit_dtype(dtype, static_cast<F&&>(f));
}

}  // namespace cudakit::tensor
