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

// The element type of a tensor (torch.dtype); dtype_name() gives each value's torch name
// (`bool_` is "bool"). The first eight keep their values (results files and tests may hold
// them); new ones go last.
enum class DType : std::uint8_t {
  float32, float16, bfloat16, float64, int32, int64, uint8, bool_,
  int8, int16, uint16, uint32, uint64,
  float8_e4m3fn, float8_e5m2, float8_e8m0fnu,
  complex64, complex128,
  float4_e2m1fn_x2,
};
// How many DType values there are: the dtypes are 0 .. kDTypeCount - 1 when cast to int.
inline constexpr int kDTypeCount = 19;

// Bytes per element (float4_e2m1fn_x2: 1, a pair of values).
// @param dtype any dtype
// @return the size in bytes of one stored element of `dtype`
[[nodiscard]] std::size_t element_size(DType dtype) noexcept;
// "float32", "float16", ..., "bool", "float8_e4m3fn", "complex64", ... (torch's names).
// @param dtype any dtype
// @return the name, which parse_dtype() reads back (a view of a static string)
[[nodiscard]] std::string_view dtype_name(DType dtype) noexcept;
// torch.is_floating_point: float16, bfloat16, float32, float64 and the three FP8 formats.
// @param dtype any dtype
// @return whether `dtype` is one of those (complex dtypes are not)
[[nodiscard]] bool is_floating(DType dtype) noexcept;
// Whether `dtype` is one of the FP8 formats: float8_e4m3fn, float8_e5m2, float8_e8m0fnu.
// @param dtype any dtype
// @return true for the three FP8 dtypes
[[nodiscard]] bool is_float8(DType dtype) noexcept;
// Whether `dtype` is complex64 or complex128 (torch.is_complex).
// @param dtype any dtype
// @return true for the two complex dtypes
[[nodiscard]] bool is_complex(DType dtype) noexcept;
// bool and the signed and unsigned integers.
// @param dtype any dtype
// @return whether `dtype` is bool or an integer type
[[nodiscard]] bool is_integral(DType dtype) noexcept;
// Whether `dtype` is an unsigned integer: uint8, uint16, uint32, uint64 (bool is not).
// @param dtype any dtype
// @return true for the four unsigned integer dtypes
[[nodiscard]] bool is_unsigned(DType dtype) noexcept;
// Whether `dtype` takes arithmetic in cudakit. See Note [Which dtypes compute].
// @param dtype any dtype
// @return true for bool, the integers, float16, bfloat16, float32 and float64
[[nodiscard]] bool is_computing(DType dtype) noexcept;
// Refuses a dtype on which an operation has no arithmetic; operations call it first.
// @param dtype the dtype of the operation's input
// @param op the operation's name, used in the message ("sum", "add", ...)
// @throws InvalidArgumentError naming `op` and the dtype when `dtype` does not compute (the
//   message says how to convert FP8, and that complex and NVFP4 are storage only).
void check_computing(DType dtype, const char* op);
// Whether a tensor of `from` converts to `to` (every pair but those with float4_e2m1fn_x2,
// which copies only to itself).
// @param from the source dtype
// @param to the destination dtype
// @return whether Tensor::copy_ and Tensor::to accept the pair
[[nodiscard]] bool can_cast(DType from, DType to) noexcept;
// The dtype both a and b convert to, by torch's rules (torch.promote_types): bool < the
// integers by rank (uint8 and int8 meet in int16) < the floating types < complex; float16 with
// bfloat16 gives float32; complex64 with float64 gives complex128.
// @throws InvalidArgumentError where torch refuses: two different FP8 formats or an FP8 and
// another dtype, uint16/uint32/uint64 with another dtype that is not floating, and
// float4_e2m1fn_x2 with anything else.
// @param a one dtype
// @param b the other dtype (the order does not matter)
// @return the promoted dtype; `a` itself when a == b
[[nodiscard]] DType promote_types(DType a, DType b);
// The dtype named `name` (as dtype_name spells it).
// @param name a torch dtype name: "float32", "bool", "float8_e4m3fn", ... (no "torch." prefix,
//   no aliases such as "float" or "half")
// @return the dtype of that name
// @throws InvalidArgumentError for another name, listing the names it knows.
[[nodiscard]] DType parse_dtype(std::string_view name);

// Whether the C++ type T is the element type of a DType (float, __half, std::int64_t,
// float8_e4m3fn, complex64, ...): true exactly for the types dtype_of maps.
// @tparam T any type
template <class T>
inline constexpr bool has_dtype = false;
// The DType of a C++ element type: dtype_of<float> == DType::float32, ... Check has_dtype<T>
// first: for a type with no DType the primary template says float32.
// @tparam T an element type (has_dtype<T> is true)
template <class T>
inline constexpr DType dtype_of = DType::float32;
// Defines has_dtype and dtype_of for one C++ element type and its DType (used just below,
// then undefined).
#define CUDAKIT_TENSOR_DTYPE_OF(type, value)      \
  template <>                                     \
  inline constexpr bool has_dtype<type> = true;   \
  template <>                                     \
  inline constexpr DType dtype_of<type> = DType::value;
// The specializations of has_dtype and dtype_of: one per DType, with the C++ element type
// that the dtype's kernels and Tensor::data<T>() use.
// @{
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
// @}
#undef CUDAKIT_TENSOR_DTYPE_OF

namespace detail {
[[noreturn]] void refuse_dtype(DType dtype, const char* what);
}  // namespace detail

// Calls f.template operator()<T>() with T the C++ type of `dtype`, for the computing dtypes.
// @tparam F a callable with a template call operator taking the element type
// @param dtype the dtype to dispatch on: one of the computing dtypes (is_computing())
// @param f the callable, called once on the calling thread
// @return what f returns (every instantiation must return the same type)
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
// float4_e2m1fn_x2).
// @tparam F a callable with a template call operator taking the element type
// @param dtype the dtype to dispatch on: any but float4_e2m1fn_x2
// @param f the callable, called once on the calling thread
// @return what f returns (every instantiation must return the same type)
// @throws InvalidArgumentError for float4_e2m1fn_x2.
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
