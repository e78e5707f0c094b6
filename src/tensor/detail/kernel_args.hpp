#pragma once
// What the tensor operations hand to their two back ends — host loops (cpu_kernels.cpp) and CUDA
// kernels (tensor_kernels.cu) — after checking shapes, dtypes and devices and allocating the
// output. Both back ends instantiate the same functors (elementwise_ops.hpp).

#include <cstdint>

#include "cudakit/core/stream_ref.hpp"
#include "cudakit/tensor/detail/strided_indexer.hpp"
#include "cudakit/tensor/dtype.hpp"

namespace cudakit::tensor::detail {

enum class NullaryOp : std::uint8_t { fill, arange };
enum class UnaryOp : std::uint8_t { relu, neg, exp, add_scalar, sub_scalar, mul_scalar, div_scalar, cast };
enum class BinaryOp : std::uint8_t { add, sub, mul, div };

// out[i] = op(in0[i], in1[i]) over the logical indices i < numel of the (broadcast) output.
struct ElementwiseArgs {
  int arity = 0;  // 0: NullaryOp, 1: UnaryOp, 2: BinaryOp
  std::uint8_t op = 0;
  DType out_dtype = DType::float32;
  DType in_dtype = DType::float32;
  std::int64_t numel = 0;
  void* out = nullptr;
  const void* in[2] = {nullptr, nullptr};
  // Used unless `contiguous` (every operand row-major contiguous with the output's shape).
  StridedIndexer out_index;
  StridedIndexer in_index[2];
  bool contiguous = false;
  double scalar0 = 0;  // fill value, arange start, or the scalar operand
  double scalar1 = 0;  // arange step
};

// out[o] = sum (or mean) of in at logical indices o * length + k, k < length, where the input's
// indexer has the reduced dimensions moved last.
struct ReduceArgs {
  DType in_dtype = DType::float32;
  DType out_dtype = DType::float32;
  const void* in = nullptr;
  StridedIndexer in_index;
  std::int64_t outputs = 0;
  std::int64_t length = 0;
  void* out = nullptr;
  bool mean = false;
};

// Counts i < numel where a[i] and b[i] differ: exactly (`exact`) or beyond atol + rtol * |b|.
struct CompareArgs {
  DType dtype = DType::float32;
  std::int64_t numel = 0;
  const void* a = nullptr;
  const void* b = nullptr;
  StridedIndexer a_index;
  StridedIndexer b_index;
  bool exact = true;
  bool equal_nan = false;
  double rtol = 0;
  double atol = 0;
};

void cpu_elementwise(const ElementwiseArgs& args);
void cuda_elementwise(const ElementwiseArgs& args, StreamRef stream);
void cpu_reduce(const ReduceArgs& args);
void cuda_reduce(const ReduceArgs& args, StreamRef stream);
std::int64_t cpu_count_mismatches(const CompareArgs& args);
std::int64_t cuda_count_mismatches(const CompareArgs& args, StreamRef stream);

}  // namespace cudakit::tensor::detail

#include "cudakit/tensor/device.hpp"

namespace cudakit::tensor::detail {
// The host back end for host tensors, the CUDA one (on `stream`) otherwise.
inline void run_elementwise(const ElementwiseArgs& args, Device device, StreamRef stream) {
  if (device.is_cpu()) cpu_elementwise(args);
  else cuda_elementwise(args, stream);
}
}  // namespace cudakit::tensor::detail
