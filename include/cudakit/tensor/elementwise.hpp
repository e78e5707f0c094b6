#pragma once
// @brief Elementwise arithmetic with broadcasting (NumPy rules) and scalar variants. Both operands must
// have the same dtype and device; the result is a new contiguous tensor of the broadcast shape.
// Integer dtypes take add/sub/mul/neg/relu; div and exp need a floating dtype; bool takes none.
// @throws InvalidArgumentError naming the shapes, dtypes or devices that do not fit.
//
// Stream ordering: for CUDA tensors the work is queued on `stream` (default: the current stream
// of the operands' device) and the call returns before it finishes; the result may be used on
// that stream at once, on another after an event or synchronization. Host tensors are computed
// before the call returns.

#include "cudakit/tensor/tensor.hpp"

namespace cudakit::tensor {

// a + b elementwise (torch.add), broadcast to one shape.
// @param a the left operand
// @param b the right operand: a's dtype and device, a shape that broadcasts with a's
// @param stream where a CUDA result is computed (see Stream ordering above)
// @return a new contiguous tensor of the broadcast shape, a's dtype and device
// @throws InvalidArgumentError naming the shapes, dtypes or devices that do not fit
// @throws StateError for an undefined tensor.
[[nodiscard]] Tensor add(const Tensor& a, const Tensor& b, OptionalStream stream = {});
// a - b elementwise (torch.sub), broadcast to one shape.
// @param a the left operand: an integer or floating dtype
// @param b the right operand: a's dtype and device, a shape that broadcasts with a's
// @param stream where a CUDA result is computed (see Stream ordering above)
// @return a new contiguous tensor of the broadcast shape, a's dtype and device
// @throws InvalidArgumentError naming the shapes, dtypes or devices that do not fit
// @throws StateError for an undefined tensor.
[[nodiscard]] Tensor sub(const Tensor& a, const Tensor& b, OptionalStream stream = {});
// a * b elementwise (torch.mul), broadcast to one shape.
// @param a the left operand: an integer or floating dtype
// @param b the right operand: a's dtype and device, a shape that broadcasts with a's
// @param stream where a CUDA result is computed (see Stream ordering above)
// @return a new contiguous tensor of the broadcast shape, a's dtype and device
// @throws InvalidArgumentError naming the shapes, dtypes or devices that do not fit
// @throws StateError for an undefined tensor.
[[nodiscard]] Tensor mul(const Tensor& a, const Tensor& b, OptionalStream stream = {});
// a / b elementwise (torch.div, true division), broadcast to one shape; floating dtypes only.
// @param a the dividend: a floating dtype
// @param b the divisor: a's dtype and device, a shape that broadcasts with a's
// @param stream where a CUDA result is computed (see Stream ordering above)
// @return a new contiguous tensor of the broadcast shape, a's dtype and device
// @throws InvalidArgumentError for an integer dtype, or shapes, dtypes or devices that do not fit
// @throws StateError for an undefined tensor.
[[nodiscard]] Tensor div(const Tensor& a, const Tensor& b, OptionalStream stream = {});
// a + s, the scalar converted to the compute type of a's dtype.
// @param a the tensor: an integer or floating dtype
// @param s the scalar added to every element
// @param stream where a CUDA result is computed (see Stream ordering above)
// @return a new contiguous tensor of a's shape, dtype and device
// @throws InvalidArgumentError for a bool or storage-only dtype.
// @throws StateError for an undefined tensor.
[[nodiscard]] Tensor add(const Tensor& a, double s, OptionalStream stream = {});
// a - s, the scalar converted to the compute type of a's dtype.
// @param a the tensor: an integer or floating dtype
// @param s the scalar subtracted from every element
// @param stream where a CUDA result is computed (see Stream ordering above)
// @return a new contiguous tensor of a's shape, dtype and device
// @throws InvalidArgumentError for a bool or storage-only dtype.
// @throws StateError for an undefined tensor.
[[nodiscard]] Tensor sub(const Tensor& a, double s, OptionalStream stream = {});
// a * s, the scalar converted to the compute type of a's dtype.
// @param a the tensor: an integer or floating dtype
// @param s the factor every element is multiplied by
// @param stream where a CUDA result is computed (see Stream ordering above)
// @return a new contiguous tensor of a's shape, dtype and device
// @throws InvalidArgumentError for a bool or storage-only dtype.
// @throws StateError for an undefined tensor.
[[nodiscard]] Tensor mul(const Tensor& a, double s, OptionalStream stream = {});
// a / s, the scalar converted to the compute type of a's dtype; floating dtypes only.
// @param a the tensor: a floating dtype
// @param s the divisor of every element
// @param stream where a CUDA result is computed (see Stream ordering above)
// @return a new contiguous tensor of a's shape, dtype and device
// @throws InvalidArgumentError for a dtype that is not floating.
// @throws StateError for an undefined tensor.
[[nodiscard]] Tensor div(const Tensor& a, double s, OptionalStream stream = {});
// max(a, 0) elementwise (torch.relu); NaN stays NaN.
// @param a the tensor: an integer or floating dtype
// @param stream where a CUDA result is computed (see Stream ordering above)
// @return a new contiguous tensor of a's shape, dtype and device
// @throws InvalidArgumentError for a bool or storage-only dtype.
// @throws StateError for an undefined tensor.
[[nodiscard]] Tensor relu(const Tensor& a, OptionalStream stream = {});
// -a elementwise (torch.neg).
// @param a the tensor: an integer or floating dtype
// @param stream where a CUDA result is computed (see Stream ordering above)
// @return a new contiguous tensor of a's shape, dtype and device
// @throws InvalidArgumentError for a bool or storage-only dtype.
// @throws StateError for an undefined tensor.
[[nodiscard]] Tensor neg(const Tensor& a, OptionalStream stream = {});
// e^a elementwise (torch.exp); floating dtypes only.
// @param a the tensor: a floating dtype
// @param stream where a CUDA result is computed (see Stream ordering above)
// @return a new contiguous tensor of a's shape, dtype and device
// @throws InvalidArgumentError for a dtype that is not floating.
// @throws StateError for an undefined tensor.
[[nodiscard]] Tensor exp(const Tensor& a, OptionalStream stream = {});

// The broadcast shape of a and b (torch.broadcast_shapes): aligned at the last dimension, each
// pair of sizes equal or one of them 1.
// @param a one shape
// @param b the other shape
// @return the shape both broadcast to, of the larger rank
// @throws InvalidArgumentError naming both and the first dimension that differs when they are
//   incompatible.
[[nodiscard]] Shape broadcast_shapes(const Shape& a, const Shape& b);

}  // namespace cudakit::tensor
