#include "cudakit/nccl/data_type.hpp"
#include "cudakit/nccl/reduce_op.hpp"

#include <string>

#include "cudakit/core/error.hpp"

namespace cudakit::nccl {

namespace {
constexpr std::string_view kNames[kDataTypeCount] = {
    "int8", "uint8", "int32", "uint32", "int64", "uint64", "float16", "float32", "float64", "bfloat16",
    "float8_e4m3", "float8_e5m2"};
constexpr std::size_t kSizes[kDataTypeCount] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
}  // namespace

std::size_t element_size(DataType type) noexcept { return kSizes[static_cast<int>(type) % kDataTypeCount]; }

std::string_view data_type_name(DataType type) noexcept {
  const int index = static_cast<int>(type);
  return index < kDataTypeCount ? kNames[index] : std::string_view("unknown");
}

std::optional<DataType> parse_data_type(std::string_view name) noexcept {
  for (int i = 0; i < kDataTypeCount; ++i)
    if (kNames[i] == name) return static_cast<DataType>(i);
  return std::nullopt;
}

DataType data_type_of(tensor::DType dtype) {
  switch (dtype) {
    case tensor::DType::float32: return DataType::float32;
    case tensor::DType::float16: return DataType::float16;
    case tensor::DType::bfloat16: return DataType::bfloat16;
    case tensor::DType::float64: return DataType::float64;
    case tensor::DType::int32: return DataType::int32;
    case tensor::DType::int64: return DataType::int64;
    case tensor::DType::int8: return DataType::int8;
    case tensor::DType::uint32: return DataType::uint32;
    case tensor::DType::uint64: return DataType::uint64;
    case tensor::DType::float8_e4m3fn: return DataType::float8_e4m3;
    case tensor::DType::float8_e5m2: return DataType::float8_e5m2;
    case tensor::DType::uint8:
    case tensor::DType::bool_: return DataType::uint8;
    default: break;
  }
  throw InvalidArgumentError("nccl", std::string(tensor::dtype_name(dtype)) +
                                         " tensors have no NCCL data type; view their bytes as "
                                         "uint8 to move them");
}

std::string_view reduce_op_name(ReduceOp op) noexcept {
  switch (op) {
    case ReduceOp::sum: return "sum";
    case ReduceOp::prod: return "prod";
    case ReduceOp::min: return "min";
    case ReduceOp::max: return "max";
    case ReduceOp::avg: return "avg";
  }
  return "unknown";
}

}  // namespace cudakit::nccl
