#pragma once
// DType: the element types a Tensor can hold, with their sizes, names and C++ types.

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace cudakit::tensor {

enum class DType : std::uint8_t { float32, float16, bfloat16, float64, int32, int64, uint8, bool_ };

// Bytes per element.
[[nodiscard]] std::size_t element_size(DType dtype) noexcept;
// "float32", "float16", ..., "bool".
[[nodiscard]] std::string_view dtype_name(DType dtype) noexcept;
[[nodiscard]] bool is_floating(DType dtype) noexcept;
// The dtype both a and b convert to without loss, by torch's rules (torch.promote_types): bool <
// uint8 < int32 < int64 < the floating types; float16 with bfloat16 gives float32; any floating
// type beats every integer one.
[[nodiscard]] DType promote_types(DType a, DType b) noexcept;
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
#undef CUDAKIT_TENSOR_DTYPE_OF

// Calls f.template operator()<T>() with T the C++ type of `dtype`.
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
    case DType::bool_: break;
  }
  return f.template operator()<bool>();
}

}  // namespace cudakit::tensor
