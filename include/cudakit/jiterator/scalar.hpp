#pragma once
// @brief Scalar: one host number handed to a runtime-compiled kernel — an extra parameter's value,
// or a host scalar in place of a tensor input — with the kind of C++ type it came from.

#include <concepts>
#include <cstdint>
#include <string>

#include "cudakit/tensor/dtype.hpp"

namespace cudakit::jiterator {

using tensor::DType;

// A host number with the dtype it is passed as. A value type.
class Scalar {
 public:
  // 0.0 as float64.
  Scalar() = default;
  // bool -> bool, integers -> int64, float -> float32, double (long double) -> float64: the
  // dtype a parameter of this value is passed to the kernel as.
  // @tparam T an arithmetic type
  // @param value the number (a uint64 above the int64 range wraps)
  template <class T>
    requires std::is_arithmetic_v<T>
  Scalar(T value) {  // NOLINT(google-explicit-constructor): numbers stand in for Scalars
    if constexpr (std::same_as<T, bool>) {
      dtype_ = DType::bool_;
      integer_ = value ? 1 : 0;
    } else if constexpr (std::integral<T>) {
      dtype_ = DType::int64;
      integer_ = static_cast<std::int64_t>(value);
    } else if constexpr (std::same_as<T, float>) {
      dtype_ = DType::float32;
      floating_ = value;
    } else {
      dtype_ = DType::float64;
      floating_ = static_cast<double>(value);
    }
  }

  // bool, int64, float32 or float64.
  // @return the dtype of the value
  [[nodiscard]] DType dtype() const noexcept { return dtype_; }
  // @return whether the value came from a floating type (float32 or float64).
  [[nodiscard]] bool is_floating() const noexcept { return tensor::is_floating(dtype_); }
  // @return the value as a double (large int64 values round).
  [[nodiscard]] double to_double() const noexcept {
    return is_floating() ? floating_ : static_cast<double>(integer_);
  }
  // @return the value as an int64 (floating values truncated toward zero; undefined out of range).
  [[nodiscard]] std::int64_t to_int64() const noexcept {
    return is_floating() ? static_cast<std::int64_t>(floating_) : integer_;
  }
  // The value converted to `dtype`'s C++ type (float16 and bfloat16: their bits), in the low
  // bytes of the result: what a kernel parameter of that type reads.
  // @param dtype a computing dtype (the parameter's type in the kernel)
  // @return the converted value's bytes, zero-extended to 64 bits
  [[nodiscard]] std::uint64_t bits_as(DType dtype) const noexcept;
  // "2.5 (float64)", for messages.
  // @return the value and its dtype as text
  [[nodiscard]] std::string description() const;

 private:
  DType dtype_ = DType::float64;
  std::int64_t integer_ = 0;
  double floating_ = 0;
};

}  // namespace cudakit::jiterator
