#pragma once
// Elementwise arithmetic with broadcasting (NumPy rules) and scalar variants. Both operands must
// have the same dtype and device; the result is a new contiguous tensor of the broadcast shape.
// Integer dtypes take add/sub/mul/neg/relu; div and exp need a floating dtype; bool takes none.
// @throws InvalidArgumentError naming the shapes, dtypes or devices that do not fit.

#include "cudakit/tensor/tensor.hpp"

namespace cudakit::tensor {

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
