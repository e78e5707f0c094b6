#pragma once
// @brief Tensor factories: empty, zeros, ones, full, arange, from_host (torch.empty, torch.zeros, ...).
// CUDA tensors are allocated and filled on `stream` (default: the current stream of the device).
//
// Stream ordering: the memory comes from the device's caching allocator for `stream`, and the
// fill (zeros, ones, full, arange, from_host's copy) is queued there; the call returns before it
// finishes (from_host excepted, which returns once `data` may be reused). Use the tensor on
// `stream`, or on another stream after an event, as any memory of the allocator.

#include <span>
#include <string>
#include <vector>

#include "cudakit/core/error.hpp"
#include "cudakit/tensor/tensor.hpp"

namespace cudakit::tensor {

struct TensorOptions {
  DType dtype = DType::float32;
  Device device = Device::cpu();
  bool pinned = false;  // host tensors only: page-locked memory (asynchronous copies)
};

// Uninitialized.
// @param sizes the shape; every size at least 0
// @param options dtype, device and (host tensors only) whether the memory is pinned
// @param stream the stream a CUDA tensor's memory is allocated for
// @throws InvalidArgumentError for a negative size or pinned device memory.
// @throws OutOfMemoryError when the device allocator cannot provide the memory
[[nodiscard]] Tensor empty(const Shape& sizes, const TensorOptions& options = {},
                           OptionalStream stream = {});
[[nodiscard]] Tensor empty_like(const Tensor& like, OptionalStream stream = {});
[[nodiscard]] Tensor full(const Shape& sizes, double value, const TensorOptions& options = {},
                          OptionalStream stream = {});
[[nodiscard]] Tensor zeros(const Shape& sizes, const TensorOptions& options = {},
                           OptionalStream stream = {});
[[nodiscard]] Tensor ones(const Shape& sizes, const TensorOptions& options = {},
                          OptionalStream stream = {});
// start, start + step, ... below `end` (above, for a negative step): a 1-D tensor.
// @throws InvalidArgumentError for step 0 or a range of the wrong sign.
[[nodiscard]] Tensor arange(double start, double end, double step = 1.0,
                            const TensorOptions& options = {}, OptionalStream stream = {});
[[nodiscard]] Tensor arange(double end, const TensorOptions& options = {},
                            OptionalStream stream = {});

// A tensor of `sizes` on `device` holding a copy of `data` (row-major, numel elements of
// `dtype`). Returns when `data` may be reused (copies from pinned memory aside).
[[nodiscard]] Tensor from_host(const void* data, const Shape& sizes, DType dtype,
                               Device device = Device::cpu(), OptionalStream stream = {});
template <class T>
[[nodiscard]] Tensor from_host(std::span<const T> values, const Shape& sizes,
                               Device device = Device::cpu(), OptionalStream stream = {}) {
  if (static_cast<std::int64_t>(values.size()) != shape_numel(sizes)) {
    throw InvalidArgumentError("from_host", std::to_string(values.size()) +
                                                " values do not fill the shape " +
                                                shape_string(sizes));
  }
  return from_host(values.data(), sizes, dtype_of<T>, device, stream);
}
template <class T>
[[nodiscard]] Tensor from_host(const std::vector<T>& values, const Shape& sizes,
                               Device device = Device::cpu(), OptionalStream stream = {}) {
  return from_host(std::span<const T>(values), sizes, device, stream);
}
// A 1-D tensor of the values.
template <class T>
[[nodiscard]] Tensor from_host(const std::vector<T>& values, Device device = Device::cpu(),
                               OptionalStream stream = {}) {
  return from_host(std::span<const T>(values), Shape{static_cast<std::int64_t>(values.size())},
                   device, stream);
}

}  // namespace cudakit::tensor
