#pragma once
// @brief Comparisons for tests: computed where the tensors live (on the GPU for CUDA tensors) and
// returned to the host.
//
// Stream ordering: for CUDA tensors the comparison is queued on `stream` (default: the current
// stream of the tensors' device) after the work already queued there, and the call waits for it
// (it returns a host value): it synchronizes with `stream`, not with the device.

#include "cudakit/tensor/tensor.hpp"

namespace cudakit::tensor {

// Same shape, same dtype, equal values (NaN never equals; use view_as(int dtype) to compare bits).
[[nodiscard]] bool equal(const Tensor& a, const Tensor& b, OptionalStream stream = {});
// |a - b| <= atol + rtol * |b| elementwise (NaNs equal when `equal_nan`); shapes must broadcast.
// @param a the tensor judged
// @param b the reference: a's dtype and device, a shape that broadcasts with a's
// @param rtol the relative tolerance, a fraction of |b|
// @param atol the absolute tolerance
// @param equal_nan whether NaN in both at one place counts as equal
// @param stream where the comparison runs (see Stream ordering above)
// @throws InvalidArgumentError naming the shapes, dtypes or devices that do not fit
[[nodiscard]] bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-5,
                            double atol = 1e-8, bool equal_nan = false, OptionalStream stream = {});
// How many elements of a and b differ (as equal() judges them); both the same shape and dtype.
[[nodiscard]] std::int64_t count_mismatches(const Tensor& a, const Tensor& b,
                                            OptionalStream stream = {});

}  // namespace cudakit::tensor
