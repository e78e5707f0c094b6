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

// a + b (and sub, mul, div below: a - b, a * b, a / b), broadcast to one shape.
// @param a the left operand
// @param b the right operand: a's dtype and device, a shape that broadcasts with a's
// @param stream where a CUDA result is computed (see Stream ordering above)
// @return a new contiguous tensor of the broadcast shape, a's dtype and device
// @throws InvalidArgumentError naming the shapes, dtypes or devices that do not fit
[[nodiscard]] Tensor add(const Tensor& a, const Tensor& b, OptionalStream stream = {});
[[nodiscard]] Tensor sub(const Tensor& a, const Tensor& b, OptionalStream stream = {});
[[nodiscard]] Tensor mul(const Tensor& a, const Tensor& b, OptionalStream stream = {});
[[nodiscard]] Tensor div(const Tensor& a, const Tensor& b, OptionalStream stream = {});
// a (op) s, the scalar converted to the compute type of a's dtype.
[[nodiscard]] Tensor add(const Tensor& a, double s, OptionalStream stream = {});
[[nodiscard]] Tensor sub(const Tensor& a, double s, OptionalStream stream = {});
[[nodiscard]] Tensor mul(const Tensor& a, double s, OptionalStream stream = {});
[[nodiscard]] Tensor div(const Tensor& a, double s, OptionalStream stream = {});
[[nodiscard]] Tensor relu(const Tensor& a, OptionalStream stream = {});
[[nodiscard]] Tensor neg(const Tensor& a, OptionalStream stream = {});
[[nodiscard]] Tensor exp(const Tensor& a, OptionalStream stream = {});

// The broadcast shape of a and b. @throws InvalidArgumentError naming both when incompatible.
[[nodiscard]] Shape broadcast_shapes(const Shape& a, const Shape& b);

}  // namespace cudakit::tensor
