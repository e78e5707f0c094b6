#pragma once
// @brief KernelVariant: what one call of a runtime-compiled kernel is made of, as far as it
// changes the generated code: each input's dtype (a tensor, or a host scalar), the outputs'
// dtypes, how the operands are read and the width of the index arithmetic. A call derives its
// variant from its arguments; the host tier names variants directly to generate and compile them
// without a GPU.

#include <cstdint>
#include <string>
#include <vector>

#include "cudakit/tensor/dtype.hpp"

namespace cudakit::jiterator {

using tensor::DType;

// One input: a tensor of `dtype`, or (`scalar`) a host number of that dtype.
struct InputType {
  DType dtype = DType::float32;  // the input's dtype (a host scalar's: bool, int64, float32, float64)
  bool scalar = false;  // a host number rather than a tensor
  // Same dtype and same kind.
  // @return whether the two inputs generate the same code
  friend bool operator==(const InputType&, const InputType&) = default;
};

// How the kernel reaches its operands.
enum class OperandAccess : std::uint8_t {
  strided,     // through per-operand strides (broadcasts, transposes, slices)
  contiguous,  // every tensor row-major with the output's shape: element i at i
  vectorized,  // contiguous, and every pointer aligned: 16-byte loads and stores
};
// "strided", "contiguous" or "vectorized".
// @param access the access
// @return its name (a static string)
[[nodiscard]] const char* to_string(OperandAccess access) noexcept;

// Everything about a call that changes the generated code; equal variants share one kernel.
struct KernelVariant {
  std::vector<InputType> inputs;  // one per input of the entry function, in its order
  // One per output; empty means the inputs' common dtype for each.
  std::vector<DType> outputs;
  OperandAccess access = OperandAccess::strided;  // how the operands are read and written
  // 64-bit index arithmetic, for more than 2^31 - 1 elements or offsets that large; 32-bit
  // otherwise (cheaper division in the strided path).
  bool index64 = false;
  // strided: the dimensions the index is split into (1 to 8, after merging the ones every
  // operand allows merging), fixed in the code so that the loop over them is unrolled exactly;
  // 0 means 8. A kernel for `dims` serves any call of as many dimensions or fewer.
  int dims = 0;
  // Every field equal.
  // @return whether the two variants generate the same code
  friend bool operator==(const KernelVariant&, const KernelVariant&) = default;
};

}  // namespace cudakit::jiterator
