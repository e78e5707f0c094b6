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
// @param a the input: a computing dtype (an empty input sums to 0)
// @param stream where a CUDA result is computed (see Stream ordering above)
// @return a 0-dim tensor: a's dtype for floating inputs, int64 for integer and bool ones
// @throws InvalidArgumentError for a dtype that does not compute.
// @throws StateError for an undefined tensor.
[[nodiscard]] Tensor sum(const Tensor& a, OptionalStream stream = {});
// The sums along `dim` (negative counts from the end); `keepdim` keeps it with size 1.
// @param a the input
// @param dim the dimension summed over, in [-a.dim(), a.dim())
// @param keepdim whether the result keeps `dim`, with size 1
// @param stream where a CUDA result is computed (see Stream ordering above)
// @return the sums: a's shape without `dim` (with size 1 there when keepdim), a's dtype for
//   floating inputs, int64 for integer and bool ones
// @throws InvalidArgumentError for a dimension out of range, naming it and a's shape, a 0-dim
//   input or a dtype that does not compute.
// @throws StateError for an undefined tensor.
[[nodiscard]] Tensor sum(const Tensor& a, int dim, bool keepdim = false, OptionalStream stream = {});
// The mean of all elements; floating dtypes only.
// @param a the input: a floating dtype, not empty
// @param stream where a CUDA result is computed (see Stream ordering above)
// @return a 0-dim tensor of a's dtype
// @throws InvalidArgumentError for other dtypes or an empty input.
// @throws StateError for an undefined tensor.
[[nodiscard]] Tensor mean(const Tensor& a, OptionalStream stream = {});
// The means along `dim`; floating dtypes only.
// @param a the input: a floating dtype
// @param dim the dimension averaged over, in [-a.dim(), a.dim()), of nonzero size
// @param keepdim whether the result keeps `dim`, with size 1
// @param stream where a CUDA result is computed (see Stream ordering above)
// @return the means, shaped as sum(a, dim, keepdim), of a's dtype
// @throws InvalidArgumentError for other dtypes, a dimension out of range or of size 0.
// @throws StateError for an undefined tensor.
[[nodiscard]] Tensor mean(const Tensor& a, int dim, bool keepdim = false,
                          OptionalStream stream = {});

}  // namespace cudakit::tensor
