#pragma once
// @brief Sums and means. Floating inputs accumulate in float (float16, bfloat16, float32) or double;
// integer and bool inputs in int64, which is then the result's dtype (as in torch).
//
// Stream ordering: for CUDA tensors the work is queued on `stream` (default: the current stream
// of the operands' device) and the call returns before it finishes; the result may be used on
// that stream at once, on another after an event or synchronization. Host tensors are computed
// before the call returns.

#include "cudakit/tensor/tensor.hpp"

namespace cudakit::tensor {

// The sum of all elements: a 0-dim tensor on the input's device.
[[nodiscard]] Tensor sum(const Tensor& a, OptionalStream stream = {});
// The sums along `dim` (negative counts from the end); `keepdim` keeps it with size 1.
// @param a the input
// @param dim the dimension summed over, in [-a.dim(), a.dim())
// @param keepdim whether the result keeps `dim`, with size 1
// @param stream where a CUDA result is computed (see Stream ordering above)
// @throws InvalidArgumentError for a dimension out of range, naming it and a's shape
[[nodiscard]] Tensor sum(const Tensor& a, int dim, bool keepdim = false, OptionalStream stream = {});
// Means; floating dtypes only. @throws InvalidArgumentError for others or an empty input.
[[nodiscard]] Tensor mean(const Tensor& a, OptionalStream stream = {});
[[nodiscard]] Tensor mean(const Tensor& a, int dim, bool keepdim = false,
                          OptionalStream stream = {});

}  // namespace cudakit::tensor
