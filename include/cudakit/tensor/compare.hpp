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
// @param a one tensor: a computing dtype (See Note [Which dtypes compute])
// @param b the other: a's dtype and device; any shape (another shape is simply not equal)
// @param stream where the comparison runs (see Stream ordering above); host tensors ignore it
// @return whether the shapes are the same and every element of a equals b's
// @throws InvalidArgumentError when the dtypes or devices differ, or the dtype does not compute.
// @throws StateError for an undefined tensor.
[[nodiscard]] bool equal(const Tensor& a, const Tensor& b, OptionalStream stream = {});
// |a - b| <= atol + rtol * |b| elementwise (NaNs equal when `equal_nan`); shapes must broadcast.
// @param a the tensor judged
// @param b the reference: a's dtype and device, a shape that broadcasts with a's
// @param rtol the relative tolerance, a fraction of |b|
// @param atol the absolute tolerance
// @param equal_nan whether NaN in both at one place counts as equal
// @param stream where the comparison runs (see Stream ordering above)
// @return whether every element is that close (true for empty tensors)
// @throws InvalidArgumentError naming the shapes, dtypes or devices that do not fit
// @throws StateError for an undefined tensor.
[[nodiscard]] bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-5,
                            double atol = 1e-8, bool equal_nan = false, OptionalStream stream = {});
// How many elements of a and b differ (as equal() judges them); both the same shape and dtype.
// @param a one tensor: a computing dtype
// @param b the other: a's shape, dtype and device
// @param stream where the count runs (see Stream ordering above); host tensors ignore it
// @return the number of positions where a and b differ (a NaN differs from everything)
// @throws InvalidArgumentError when shapes, dtypes or devices differ, naming both tensors.
// @throws StateError for an undefined tensor.
[[nodiscard]] std::int64_t count_mismatches(const Tensor& a, const Tensor& b,
                                            OptionalStream stream = {});

}  // namespace cudakit::tensor
