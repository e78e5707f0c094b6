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

// What a factory makes (torch's dtype=, device=, pin_memory= arguments).
struct TensorOptions {
  DType dtype = DType::float32;  // the element type
  Device device = Device::cpu();  // where the memory lives (Device::cuda(), ...)
  bool pinned = false;  // host tensors only: page-locked memory (asynchronous copies)
};

// A new contiguous tensor, uninitialized (torch.empty). Nothing is queued: the memory is
// usable at once on `stream`, on other streams after an event.
// @param sizes the shape; every size at least 0
// @param options dtype, device and (host tensors only) whether the memory is pinned
// @param stream the stream a CUDA tensor's memory is allocated for (default: the current stream
//   of options.device); must be on that device. Host tensors ignore it.
// @return the tensor, with contiguous strides
// @throws InvalidArgumentError for a negative size, pinned device memory or a stream of another
//   device.
// @throws OutOfMemoryError when the device allocator cannot provide the memory
// @throws CudaError when pinned host memory cannot be allocated.
[[nodiscard]] Tensor empty(const Shape& sizes, const TensorOptions& options = {},
                           OptionalStream stream = {});
// An uninitialized tensor of like's shape, dtype and device (torch.empty_like); contiguous,
// whatever like's strides. Host results are not pinned.
// @param like the tensor whose shape, dtype and device are taken
// @param stream as for empty()
// @return the new tensor
// @throws StateError for an undefined `like`.
// @throws OutOfMemoryError when the device allocator cannot provide the memory
[[nodiscard]] Tensor empty_like(const Tensor& like, OptionalStream stream = {});
// A new tensor with every element `value` (torch.full): empty() then Tensor::fill_.
// @param sizes the shape; every size at least 0
// @param value the value, converted to options.dtype (float4_e2m1fn_x2 takes only 0)
// @param options dtype, device and pinning
// @param stream allocation and fill stream of a CUDA tensor (see Stream ordering above)
// @return the tensor; a CUDA one is filled once `stream` reaches the fill
// @throws InvalidArgumentError as empty(), or a nonzero value for float4_e2m1fn_x2.
// @throws OutOfMemoryError when the device allocator cannot provide the memory
[[nodiscard]] Tensor full(const Shape& sizes, double value, const TensorOptions& options = {},
                          OptionalStream stream = {});
// full(sizes, 0) (torch.zeros).
// @param sizes the shape; every size at least 0
// @param options dtype, device and pinning
// @param stream allocation and fill stream of a CUDA tensor (see Stream ordering above)
// @return the tensor of zeros
// @throws InvalidArgumentError as empty().
// @throws OutOfMemoryError when the device allocator cannot provide the memory
[[nodiscard]] Tensor zeros(const Shape& sizes, const TensorOptions& options = {},
                           OptionalStream stream = {});
// full(sizes, 1) (torch.ones).
// @param sizes the shape; every size at least 0
// @param options dtype, device and pinning (float4_e2m1fn_x2 refuses)
// @param stream allocation and fill stream of a CUDA tensor (see Stream ordering above)
// @return the tensor of ones
// @throws InvalidArgumentError as empty(), and for float4_e2m1fn_x2.
// @throws OutOfMemoryError when the device allocator cannot provide the memory
[[nodiscard]] Tensor ones(const Shape& sizes, const TensorOptions& options = {},
                          OptionalStream stream = {});
// start, start + step, ... below `end` (above, for a negative step): a 1-D tensor
// (torch.arange) of ceil((end - start) / step) elements, element i being start + i * step
// computed in double and converted to options.dtype.
// @param start the first value
// @param end the bound, not included
// @param step the distance between values, nonzero
// @param options dtype (a computing one), device and pinning
// @param stream allocation and fill stream of a CUDA tensor (see Stream ordering above)
// @return the 1-D tensor (empty when start == end)
// @throws InvalidArgumentError for step 0, a value that is not finite, a range of the wrong
//   sign or a dtype that does not compute.
// @throws OutOfMemoryError when the device allocator cannot provide the memory
[[nodiscard]] Tensor arange(double start, double end, double step = 1.0,
                            const TensorOptions& options = {}, OptionalStream stream = {});
// arange(0, end, 1): 0, 1, ... below `end`.
// @param end the bound, not included; at least 0
// @param options dtype (a computing one), device and pinning
// @param stream allocation and fill stream of a CUDA tensor (see Stream ordering above)
// @return the 1-D tensor
// @throws InvalidArgumentError for a negative or non-finite end, or a dtype that does not compute.
// @throws OutOfMemoryError when the device allocator cannot provide the memory
[[nodiscard]] Tensor arange(double end, const TensorOptions& options = {},
                            OptionalStream stream = {});

// A tensor of `sizes` on `device` holding a copy of `data` (row-major, numel elements of
// `dtype`). Returns when `data` may be reused: the bytes are first copied into a host tensor,
// which is then copied to the device on `stream` (Tensor::to).
// @param data numel(sizes) * element_size(dtype) readable bytes (may be null when that is 0)
// @param sizes the shape; every size at least 0
// @param dtype the element type of `data`
// @param device where the tensor lives
// @param stream the stream of the copy and allocation for a CUDA device (default: its current
//   stream); the call returns before the device copy completes
// @return the new contiguous tensor
// @throws InvalidArgumentError for a negative size or a stream of another device.
// @throws OutOfMemoryError when the device allocator cannot provide the memory
[[nodiscard]] Tensor from_host(const void* data, const Shape& sizes, DType dtype,
                               Device device = Device::cpu(), OptionalStream stream = {});
// A tensor of `sizes` on `device` holding a copy of `values` (row-major), of T's dtype.
// @tparam T an element type with a DType (has_dtype<T>)
// @param values exactly numel(sizes) values
// @param sizes the shape
// @param device where the tensor lives
// @param stream the stream of the copy for a CUDA device (as the untyped from_host)
// @return the new contiguous tensor of dtype_of<T>
// @throws InvalidArgumentError when the number of values does not fill the shape.
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
// from_host(std::span) for a vector.
// @tparam T an element type with a DType (has_dtype<T>)
// @param values exactly numel(sizes) values
// @param sizes the shape
// @param device where the tensor lives
// @param stream the stream of the copy for a CUDA device (as the untyped from_host)
// @return the new contiguous tensor of dtype_of<T>
// @throws InvalidArgumentError when the number of values does not fill the shape.
template <class T>
[[nodiscard]] Tensor from_host(const std::vector<T>& values, const Shape& sizes,
                               Device device = Device::cpu(), OptionalStream stream = {}) {
  return from_host(std::span<const T>(values), sizes, device, stream);
}
// A 1-D tensor of the values.
// @tparam T an element type with a DType (has_dtype<T>)
// @param values the elements
// @param device where the tensor lives
// @param stream the stream of the copy for a CUDA device (as the untyped from_host)
// @return the new 1-D tensor of values.size() elements of dtype_of<T>
template <class T>
[[nodiscard]] Tensor from_host(const std::vector<T>& values, Device device = Device::cpu(),
                               OptionalStream stream = {}) {
  return from_host(std::span<const T>(values), Shape{static_cast<std::int64_t>(values.size())},
                   device, stream);
}

}  // namespace cudakit::tensor
