#include "cudakit/tensor/dtype.hpp"

#include <array>
#include <string>

#include "cudakit/core/error.hpp"

namespace cudakit::tensor {
namespace {
constexpr std::array<std::string_view, kDTypeCount> kNames = {
    "float32",       "float16",     "bfloat16",       "float64",   "int32",      "int64",
    "uint8",         "bool",        "int8",           "int16",     "uint16",     "uint32",
    "uint64",        "float8_e4m3fn", "float8_e5m2",  "float8_e8m0fnu", "complex64", "complex128",
    "float4_e2m1fn_x2"};
constexpr std::array<std::size_t, kDTypeCount> kSizes = {4, 2, 2, 8, 4, 8, 1, 1, 1, 2,
                                                         2, 4, 8, 1, 1, 1, 8, 16, 1};

std::string names_list() {
  std::string out;
  for (std::size_t i = 0; i < kNames.size(); ++i) out += (i ? ", " : "") + std::string(kNames[i]);
  return out;
}

// Integer ranks for promotion; uint8 and int8 share one (their pair needs int16).
int integer_rank(DType t) {
  switch (t) {
    case DType::bool_: return 0;
    case DType::uint8:
    case DType::int8: return 1;
    case DType::int16: return 2;
    case DType::int32: return 3;
    default: return 4;  // int64
  }
}

// float16 and bfloat16 share a rank (their pair needs float32).
int floating_rank(DType t) {
  switch (t) {
    case DType::float16:
    case DType::bfloat16: return 0;
    case DType::float32: return 1;
    default: return 2;  // float64
  }
}

[[noreturn]] void refuse_promotion(DType a, DType b, const char* why) {
  throw InvalidArgumentError("promote_types", std::string(why) + ", attempted to promote " +
                                                  std::string(dtype_name(a)) + " and " +
                                                  std::string(dtype_name(b)));
}

}  // namespace

namespace detail {
void refuse_dtype(DType dtype, const char* what) {
  throw InvalidArgumentError("tensor", std::string(what) + " is not defined for " +
                                           std::string(dtype_name(dtype)) + " tensors");
}
}  // namespace detail

std::size_t element_size(DType dtype) noexcept { return kSizes[static_cast<std::size_t>(dtype)]; }
std::string_view dtype_name(DType dtype) noexcept { return kNames[static_cast<std::size_t>(dtype)]; }
bool is_float8(DType dtype) noexcept {
  return dtype == DType::float8_e4m3fn || dtype == DType::float8_e5m2 || dtype == DType::float8_e8m0fnu;
}
bool is_floating(DType dtype) noexcept {
  return dtype == DType::float32 || dtype == DType::float16 || dtype == DType::bfloat16 ||
         dtype == DType::float64 || is_float8(dtype);
}
bool is_complex(DType dtype) noexcept { return dtype == DType::complex64 || dtype == DType::complex128; }
bool is_unsigned(DType dtype) noexcept {
  return dtype == DType::uint8 || dtype == DType::uint16 || dtype == DType::uint32 ||
         dtype == DType::uint64;
}
bool is_integral(DType dtype) noexcept {
  return dtype == DType::bool_ || dtype == DType::int8 || dtype == DType::int16 ||
         dtype == DType::int32 || dtype == DType::int64 || is_unsigned(dtype);
}
bool is_computing(DType dtype) noexcept {
  return is_integral(dtype) || (is_floating(dtype) && !is_float8(dtype));
}
void check_computing(DType dtype, const char* op) {
  if (is_computing(dtype)) return;
  const std::string why = is_float8(dtype) ? " (FP8 stores values; convert with to(float32) or "
                                             "bfloat16 first, as torch does)"
                          : is_complex(dtype) ? " (cudakit stores and converts complex tensors; "
                                                "it has no complex arithmetic)"
                                              : " (storage only: copies and views)";
  throw InvalidArgumentError(op, std::string(op) + " is not defined for " +
                                     std::string(dtype_name(dtype)) + " tensors" + why);
}
bool can_cast(DType from, DType to) noexcept {
  return from == to || (from != DType::float4_e2m1fn_x2 && to != DType::float4_e2m1fn_x2);
}

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  if (a == DType::float4_e2m1fn_x2 || b == DType::float4_e2m1fn_x2) {
    refuse_promotion(a, b, "Promotion for float4_e2m1fn_x2 is not supported");
  }
  if (is_float8(a) || is_float8(b)) refuse_promotion(a, b, "Promotion for Float8 types is not supported");
  const auto barebones = [](DType t) {
    return t == DType::uint16 || t == DType::uint32 || t == DType::uint64;
  };
  if (barebones(a) || barebones(b)) {
    // torch promotes these only with floating types (the floating type wins).
    if (is_floating(a) || is_complex(a)) return a;
    if (is_floating(b) || is_complex(b)) return b;
    refuse_promotion(a, b, "Promotion for uint16, uint32, uint64 types is not supported");
  }
  if (is_complex(a) || is_complex(b)) {
    if (a == DType::complex128 || b == DType::complex128) return DType::complex128;
    const DType other = is_complex(a) ? b : a;
    return other == DType::float64 ? DType::complex128 : DType::complex64;
  }
  const bool fa = is_floating(a), fb = is_floating(b);
  if (fa != fb) return fa ? a : b;
  if (fa) {
    const int ra = floating_rank(a), rb = floating_rank(b);
    if (ra == rb) return DType::float32;  // float16 with bfloat16
    return ra > rb ? a : b;
  }
  const int ra = integer_rank(a), rb = integer_rank(b);
  if (ra == rb) return DType::int16;  // uint8 with int8
  return ra > rb ? a : b;
}

DType parse_dtype(std::string_view name) {
  for (std::size_t i = 0; i < kNames.size(); ++i) {
    if (kNames[i] == name) return static_cast<DType>(i);
  }
  throw InvalidArgumentError("parse_dtype", "unknown dtype '" + std::string(name) + "' (" +
                                                names_list() + ")");
}

}  // namespace cudakit::tensor
