#pragma once
// Comparisons for tests: computed where the tensors live (on the GPU for CUDA tensors) and
// returned to the host.

#include "cudakit/tensor/tensor.hpp"

namespace cudakit::tensor {

// Same shape, same dtype, equal values (NaN never equals; use view_as(int dtype) to compare bits).
[[nodiscard]] bool equal(const Tensor& a, const Tensor& b, OptionalStream stream = {});
// |a - b| <= atol + rtol * |b| elementwise (NaNs equal when `equal_nan`); shapes must broadcast.
[[nodiscard]] bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-5,
                            double atol = 1e-8, bool equal_nan = false, OptionalStream stream = {});
// How many elements of a and b differ (as equal() judges them); both the same shape and dtype.
[[nodiscard]] std::int64_t count_mismatches(const Tensor& a, const Tensor& b,
                                            OptionalStream stream = {});

}  // namespace cudakit::tensor
