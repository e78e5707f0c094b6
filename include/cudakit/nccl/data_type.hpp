#pragma once
// @brief DataType: every element type NCCL takes (the values are ncclDataType_t's), and how the tensor
// layer's dtypes map onto them.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "cudakit/tensor/dtype.hpp"

namespace cudakit::nccl {

// An element type of NCCL's; each value equals the ncclDataType_t of the same name, so it is
// handed to NCCL as it is. float8_e4m3 and float8_e5m2 need NCCL 2.24 or later
// (check_data_type()).
enum class DataType : std::uint8_t {
  int8 = 0, uint8, int32, uint32, int64, uint64, float16, float32, float64, bfloat16,
  float8_e4m3, float8_e5m2,
};
// The number of DataType values (one past the last).
inline constexpr int kDataTypeCount = 12;

// @param type an element type
// @return the bytes one element of `type` takes (1, 2, 4 or 8).
[[nodiscard]] std::size_t element_size(DataType type) noexcept;
// @param type an element type
// @return its name ("float32", "bfloat16", ...), or "unknown" for a value outside the enum.
[[nodiscard]] std::string_view data_type_name(DataType type) noexcept;
// The type a name names: the inverse of data_type_name().
// @param name a type's name ("float32", "bfloat16", ...)
// @return the type, or nullopt for a name that is none.
[[nodiscard]] std::optional<DataType> parse_data_type(std::string_view name) noexcept;
// The NCCL type of a tensor dtype; bool travels as uint8 (see Note [Bool reductions] in
// communicator.cpp).
// @param dtype a tensor dtype
// @return the NCCL type that carries its elements unchanged
// @throws InvalidArgumentError for a dtype NCCL has no type for (int16, uint16, float8_e8m0fnu,
//   complex, float4_e2m1fn_x2); the message suggests viewing the bytes as uint8.
[[nodiscard]] DataType data_type_of(tensor::DType dtype);

}  // namespace cudakit::nccl
