#include "cudakit/jiterator/scalar.hpp"

#include <cstring>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/jiterator/compiled_kernel_info.hpp"
#include "cudakit/jiterator/kernel_variant.hpp"

namespace cudakit::jiterator {
namespace {
template <class T>
std::uint64_t bits_of(T value) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof value);
  return bits;
}
}  // namespace

std::uint64_t Scalar::bits_as(DType dtype) const noexcept {
  switch (dtype) {
    case DType::float32: return bits_of(static_cast<float>(to_double()));
    case DType::float64: return bits_of(to_double());
    case DType::float16: return bits_of(__half(static_cast<float>(to_double())));
    case DType::bfloat16: return bits_of(__nv_bfloat16(static_cast<float>(to_double())));
    case DType::int32: return bits_of(static_cast<std::int32_t>(to_int64()));
    case DType::int64: return bits_of(to_int64());
    case DType::uint8: return bits_of(static_cast<std::uint8_t>(to_int64()));
    case DType::bool_: return bits_of(is_floating() ? floating_ != 0 : integer_ != 0);
    case DType::int8: return bits_of(static_cast<std::int8_t>(to_int64()));
    case DType::int16: return bits_of(static_cast<std::int16_t>(to_int64()));
    case DType::uint16: return bits_of(static_cast<std::uint16_t>(to_int64()));
    case DType::uint32: return bits_of(static_cast<std::uint32_t>(to_int64()));
    case DType::uint64: return bits_of(static_cast<std::uint64_t>(to_int64()));
    default: break;  // scalars are bool, int64, float32 or float64
  }
  return 0;
}

std::string Scalar::description() const {
  if (dtype_ == DType::bool_) return integer_ ? "true (bool)" : "false (bool)";
  return is_floating() ? cudakit::detail::concat(floating_, " (", tensor::dtype_name(dtype_), ")")
                       : cudakit::detail::concat(integer_, " (int64)");
}

const char* to_string(OperandAccess access) noexcept {
  switch (access) {
    case OperandAccess::strided: return "strided";
    case OperandAccess::contiguous: return "contiguous";
    case OperandAccess::vectorized: return "vectorized";
  }
  return "?";
}

const char* to_string(KernelOrigin origin) noexcept {
  switch (origin) {
    case KernelOrigin::memory: return "memory";
    case KernelOrigin::disk: return "disk";
    case KernelOrigin::compiled: return "compiled";
  }
  return "?";
}

}  // namespace cudakit::jiterator
