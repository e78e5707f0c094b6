#pragma once
// @brief Tensor: a strided view (dtype, sizes, strides, storage offset) of a Storage on the host or one
// CUDA device — the small tensor the other layers and the tests need, not a tensor library.
//
// Streams: every method that copies or launches takes an optional stream; left out, it is the
// calling thread's current stream of the tensor's device (cudakit::current_stream(device)).
// See Note [Defaulting to the current stream].
// Work is queued on that stream; results on the host (to_host, item, to_vector) wait for it.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cudakit/core/optional_stream.hpp"
#include "cudakit/tensor/device.hpp"
#include "cudakit/tensor/dtype.hpp"
#include "cudakit/tensor/storage.hpp"

namespace cudakit::tensor {

using Shape = std::vector<std::int64_t>;
using cudakit::OptionalStream;

class Tensor {
 public:
  // An undefined tensor (defined() is false); every other method but defined() throws StateError.
  Tensor() = default;
  // A view of `storage`. @throws InvalidArgumentError if the view reaches outside the storage,
  // a size is negative or there are more than 8 dimensions.
  Tensor(std::shared_ptr<Storage> storage, DType dtype, Shape sizes, Shape strides,
         std::int64_t storage_offset = 0);

  [[nodiscard]] bool defined() const noexcept { return storage_ != nullptr; }
  [[nodiscard]] DType dtype() const noexcept { return dtype_; }
  [[nodiscard]] Device device() const;
  [[nodiscard]] const Shape& sizes() const noexcept { return sizes_; }
  [[nodiscard]] const Shape& strides() const noexcept { return strides_; }
  [[nodiscard]] std::int64_t storage_offset() const noexcept { return offset_; }
  [[nodiscard]] int dim() const noexcept { return static_cast<int>(sizes_.size()); }
  // Negative dims count from the end. @throws InvalidArgumentError out of range.
  [[nodiscard]] std::int64_t size(int dim) const;
  [[nodiscard]] std::int64_t stride(int dim) const;
  [[nodiscard]] std::int64_t numel() const noexcept;
  [[nodiscard]] std::size_t element_size() const noexcept;
  [[nodiscard]] std::size_t nbytes() const noexcept { return numel() * element_size(); }
  // Row-major contiguous (size-1 dims may have any stride).
  [[nodiscard]] bool is_contiguous() const noexcept;
  [[nodiscard]] const std::shared_ptr<Storage>& storage() const noexcept { return storage_; }
  // Address of the first element (storage data + offset).
  [[nodiscard]] void* data_ptr() const;
  // Typed address. @throws InvalidArgumentError when T is not the tensor's dtype.
  template <class T>
  [[nodiscard]] T* data() const {
    check_dtype(dtype_of<T>, "Tensor::data");
    return static_cast<T*>(data_ptr());
  }
  // "float32[2, 3] on cuda:0" — for error messages.
  [[nodiscard]] std::string description() const;
  // "[2, 3]".
  [[nodiscard]] std::string shape_string() const;

  // --- views (share storage; no copy, no stream) ---
  // The transpose of a 2-D tensor. @throws InvalidArgumentError for another rank.
  [[nodiscard]] Tensor t() const;
  [[nodiscard]] Tensor transpose(int dim0, int dim1) const;
  // Same storage, new sizes; one size may be -1. @throws InvalidArgumentError when the element
  // count differs or the strides do not allow it (use reshape).
  [[nodiscard]] Tensor view(const Shape& sizes) const;
  // Elements [start, end) of `dim` in steps of `step` (> 0); start/end are clamped as in Python.
  [[nodiscard]] Tensor slice(int dim, std::int64_t start, std::int64_t end,
                             std::int64_t step = 1) const;
  // Reinterprets the bytes as another dtype of the same element size (float32 <-> int32, ...).
  [[nodiscard]] Tensor view_as(DType dtype) const;
  // torch.view_as_real: a complex64 (complex128) tensor's parts as float32 (float64) with a
  // last dimension of 2. @throws InvalidArgumentError for a tensor that is not complex.
  [[nodiscard]] Tensor view_as_real() const;

  // --- copies (queued on `stream`) ---
  // view() when possible, otherwise a contiguous copy with the new sizes.
  [[nodiscard]] Tensor reshape(const Shape& sizes, OptionalStream stream = {}) const;
  // *this if contiguous, otherwise a contiguous copy.
  [[nodiscard]] Tensor contiguous(OptionalStream stream = {}) const;
  // Copies `src` into *this: same shape (or broadcastable to it), any dtypes (converted), any
  // devices (host<->device, device<->device). The stream is the destination's when it is a CUDA
  // tensor, else the source's. A copy to host memory has finished when copy_ returns, unless
  // `non_blocking` and the host memory is pinned; a copy from host memory may return earlier
  // (from pinned memory the source must then stay untouched until the stream reaches it).
  // @throws InvalidArgumentError for shapes that do not match (naming both).
  Tensor& copy_(const Tensor& src, OptionalStream stream = {}, bool non_blocking = false);
  // A copy on `device` (*this when already there and `dtype` matches).
  [[nodiscard]] Tensor to(Device device, OptionalStream stream = {}) const;
  [[nodiscard]] Tensor to(DType dtype, OptionalStream stream = {}) const;
  // A contiguous host copy; finished when it returns.
  [[nodiscard]] Tensor to_host(OptionalStream stream = {}) const;
  // The elements in row-major order, converted to T. Waits for the copy.
  template <class T>
  [[nodiscard]] std::vector<T> to_vector(OptionalStream stream = {}) const {
    const Tensor host = to(dtype_of<T>, stream).to_host(stream);
    const T* p = static_cast<const T*>(host.data_ptr());
    return std::vector<T>(p, p + host.numel());
  }
  // The value of a one-element tensor as a double. @throws InvalidArgumentError otherwise.
  [[nodiscard]] double item(OptionalStream stream = {}) const;
  // Sets every element to `value` (converted to the dtype).
  Tensor& fill_(double value, OptionalStream stream = {});
  Tensor& zero_(OptionalStream stream = {}) { return fill_(0.0, stream); }

  // Storage::record_stream for this tensor's storage.
  void record_stream(StreamRef stream) const;
  // The stream work on this tensor goes to: `stream` when given (checked to be on the tensor's
  // device), else the current stream of its device. @throws StateError for a host tensor.
  [[nodiscard]] StreamRef stream_or_current(OptionalStream stream) const;

  // Checks used by operations: throw InvalidArgumentError naming `api` and the tensors.
  void check_defined(const char* api) const;
  void check_dtype(DType expected, const char* api) const;

 private:
  std::shared_ptr<Storage> storage_;
  DType dtype_ = DType::float32;
  Shape sizes_;
  Shape strides_;
  std::int64_t offset_ = 0;
};

// Row-major contiguous strides for `sizes`.
[[nodiscard]] Shape contiguous_strides(const Shape& sizes);
// The product of `sizes`. @throws InvalidArgumentError for a negative size.
[[nodiscard]] std::int64_t shape_numel(const Shape& sizes);
// "[2, 3]".
[[nodiscard]] std::string shape_string(const Shape& sizes);

}  // namespace cudakit::tensor
