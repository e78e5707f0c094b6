#pragma once
// @brief The element types of the dtypes that have no C++ arithmetic type: the three FP8 formats, the
// two complex types and NVFP4's packed pair. Each is its stored bits (FP8, FP4) or its parts
// (complex), laid out as torch, DLPack and safetensors store them; the conversions to and from
// the other element types are in detail/convert.hpp. See Note [FP8 conversions].

#include <cstdint>

#include "cudakit/core/host_device.hpp"

namespace cudakit::tensor {

// E4M3 with no infinity and one NaN pattern per sign (0x7f, 0xff): finite values up to 448.
struct float8_e4m3fn {
  std::uint8_t bits;  // sign, 4 exponent bits (bias 7), 3 mantissa bits
};
// E5M2: IEEE-like, with infinities (0x7c, 0xfc) and NaNs; finite values up to 57344.
struct float8_e5m2 {
  std::uint8_t bits;  // sign, 5 exponent bits (bias 15), 2 mantissa bits
};
// E8M0: an unsigned power of two 2^(bits - 127), 0xff the NaN; OCP MX's block scale.
struct float8_e8m0fnu {
  std::uint8_t bits;  // the biased exponent (no sign, no mantissa)
};
// Two E2M1 values packed in one byte (the first in the low nibble), as torch's
// float4_e2m1fn_x2: storage only.
struct float4_e2m1fn_x2 {
  std::uint8_t bits;  // two E2M1 values: bits 0-3 the first, bits 4-7 the second
};

// A single-precision complex number (torch.complex64) in std::complex's layout (real part
// first), usable in kernels.
struct alignas(8) complex64 {
  float re;  // the real part
  float im;  // the imaginary part
};
// A double-precision complex number (torch.complex128), laid out as complex64.
struct alignas(16) complex128 {
  double re;  // the real part
  double im;  // the imaginary part
};

static_assert(sizeof(float8_e4m3fn) == 1 && sizeof(complex64) == 8 && sizeof(complex128) == 16);

}  // namespace cudakit::tensor
