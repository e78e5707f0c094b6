#include "cudakit/tensor/dtype.hpp"

#include <array>
#include <string>

#include "cudakit/core/error.hpp"

namespace cudakit::tensor {
namespace {
constexpr std::array<std::string_view, 8> kNames = {"float32", "float16", "bfloat16", "float64",
                                                    "int32",   "int64",   "uint8",    "bool"};
constexpr std::array<std::size_t, 8> kSizes = {4, 2, 2, 8, 4, 8, 1, 1};
}  // namespace

std::size_t element_size(DType dtype) noexcept { return kSizes[static_cast<std::size_t>(dtype)]; }
std::string_view dtype_name(DType dtype) noexcept { return kNames[static_cast<std::size_t>(dtype)]; }
bool is_floating(DType dtype) noexcept {
  return dtype == DType::float32 || dtype == DType::float16 || dtype == DType::bfloat16 ||
         dtype == DType::float64;
}

DType promote_types(DType a, DType b) noexcept {
  if (a == b) return a;
  // Integer (and bool) order by width; every one of our integer types holds the narrower ones.
  constexpr auto integer_rank = [](DType t) {
    switch (t) {
      case DType::bool_: return 0;
      case DType::uint8: return 1;
      case DType::int32: return 2;
      default: return 3;  // int64
    }
  };
  const bool fa = is_floating(a), fb = is_floating(b);
  if (!fa && !fb) return integer_rank(a) >= integer_rank(b) ? a : b;
  if (fa != fb) return fa ? a : b;
  // Two different floating types: float64 beats all; otherwise the pair needs float32 (float16
  // and bfloat16 hold neither each other nor float32).
  if (a == DType::float64 || b == DType::float64) return DType::float64;
  return DType::float32;
}

DType parse_dtype(std::string_view name) {
  for (std::size_t i = 0; i < kNames.size(); ++i) {
    if (kNames[i] == name) return static_cast<DType>(i);
  }
  throw InvalidArgumentError("parse_dtype", "unknown dtype '" + std::string(name) +
                                                "' (float32, float16, bfloat16, float64, int32, "
                                                "int64, uint8 or bool)");
}

}  // namespace cudakit::tensor
