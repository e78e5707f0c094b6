#pragma once
// @brief DataType: every element type NCCL takes (the values are ncclDataType_t's), and how the tensor
// layer's dtypes map onto them.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "cudakit/tensor/dtype.hpp"

namespace cudakit::nccl {

enum class DataType : std::uint8_t {
  int8 = 0, uint8, int32, uint32, int64, uint64, float16, float32, float64, bfloat16,
  float8_e4m3, float8_e5m2,
};
inline constexpr int kDataTypeCount = 12;

[[nodiscard]] std::size_t element_size(DataType type) noexcept;
[[nodiscard]] std::string_view data_type_name(DataType type) noexcept;
// The name's type ("float32", "bfloat16", ...); nullopt for a name that is none.
[[nodiscard]] std::optional<DataType> parse_data_type(std::string_view name) noexcept;
// The NCCL type of a tensor dtype; bool travels as uint8 (see Note [Bool reductions] in
// communicator.cpp). @throws InvalidArgumentError for a dtype NCCL has no type for (int16,
// uint16, float8_e8m0fnu, complex, float4_e2m1fn_x2).
[[nodiscard]] DataType data_type_of(tensor::DType dtype);

}  // namespace cudakit::nccl
