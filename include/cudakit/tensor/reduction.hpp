#pragma once
// Sums and means. Floating inputs accumulate in float (float16, bfloat16, float32) or double;
// integer and bool inputs in int64, which is then the result's dtype (as in torch).

#include "cudakit/tensor/tensor.hpp"

namespace cudakit::tensor {

// The sum of all elements: a 0-dim tensor on the input's device.
[[nodiscard]] Tensor sum(const Tensor& a, OptionalStream stream = {});
// The sums along `dim` (negative counts from the end); `keepdim` keeps it with size 1.
[[nodiscard]] Tensor sum(const Tensor& a, int dim, bool keepdim = false, OptionalStream stream = {});
// Means; floating dtypes only. @throws InvalidArgumentError for others or an empty input.
[[nodiscard]] Tensor mean(const Tensor& a, OptionalStream stream = {});
[[nodiscard]] Tensor mean(const Tensor& a, int dim, bool keepdim = false,
                          OptionalStream stream = {});

}  // namespace cudakit::tensor
