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

// A tensor's sizes (or strides), outermost dimension first.
using Shape = std::vector<std::int64_t>;
using cudakit::OptionalStream;

// A strided view of a Storage (torch.Tensor without autograd). Copying a Tensor copies the view,
// not the elements: copies share the storage. A Tensor object is not synchronized: share it
// across threads only for reading.
class Tensor {
 public:
  // An undefined tensor (defined() is false); the accessors of its metadata return empty values,
  // and the methods that touch elements or the device throw StateError.
  Tensor() = default;
  // A view of `storage`.
  // @param storage the memory viewed (shared; not null)
  // @param dtype the element type
  // @param sizes the shape, at most 8 dimensions, every size at least 0
  // @param strides the distance between neighbours along each dimension, in elements (may be
  //   negative or 0); as many as `sizes`
  // @param storage_offset the first element's index in the storage, in elements
  // @throws InvalidArgumentError if the view reaches outside the storage, the storage is null,
  //   sizes and strides differ in length, a size is negative or there are more than 8 dimensions.
  Tensor(std::shared_ptr<Storage> storage, DType dtype, Shape sizes, Shape strides,
         std::int64_t storage_offset = 0);

  // @return whether the tensor views a storage (false only for a default-constructed one).
  [[nodiscard]] bool defined() const noexcept { return storage_ != nullptr; }
  // @return the element type.
  [[nodiscard]] DType dtype() const noexcept { return dtype_; }
  // @return where the storage lives.
  // @throws StateError for an undefined tensor.
  [[nodiscard]] Device device() const;
  // @return the shape.
  [[nodiscard]] const Shape& sizes() const noexcept { return sizes_; }
  // @return the strides, in elements.
  [[nodiscard]] const Shape& strides() const noexcept { return strides_; }
  // @return the first element's index in the storage, in elements.
  [[nodiscard]] std::int64_t storage_offset() const noexcept { return offset_; }
  // @return the number of dimensions (0 for a scalar).
  [[nodiscard]] int dim() const noexcept { return static_cast<int>(sizes_.size()); }
  // The size of one dimension. Negative dims count from the end.
  // @param dim in [-dim(), dim())
  // @return the size of that dimension
  // @throws InvalidArgumentError out of range.
  [[nodiscard]] std::int64_t size(int dim) const;
  // The stride of one dimension, in elements. Negative dims count from the end.
  // @param dim in [-dim(), dim())
  // @return the stride of that dimension
  // @throws InvalidArgumentError out of range.
  [[nodiscard]] std::int64_t stride(int dim) const;
  // @return the number of elements: the product of the sizes (1 for a 0-dim tensor).
  [[nodiscard]] std::int64_t numel() const noexcept;
  // @return the bytes of one element of dtype().
  [[nodiscard]] std::size_t element_size() const noexcept;
  // @return numel() * element_size(): the bytes of the elements, not of the storage.
  [[nodiscard]] std::size_t nbytes() const noexcept { return numel() * element_size(); }
  // Row-major contiguous (size-1 dims may have any stride).
  // @return whether the elements lie densely in row-major order (true for empty tensors)
  [[nodiscard]] bool is_contiguous() const noexcept;
  // @return the storage viewed (null for an undefined tensor).
  [[nodiscard]] const std::shared_ptr<Storage>& storage() const noexcept { return storage_; }
  // Address of the first element (storage data + offset).
  // @return a host or device pointer, as device() says
  // @throws StateError for an undefined tensor.
  [[nodiscard]] void* data_ptr() const;
  // Typed address.
  // @tparam T the C++ type of dtype() (dtype_of<T> == dtype())
  // @return data_ptr() as a T*
  // @throws InvalidArgumentError when T is not the tensor's dtype.
  // @throws StateError for an undefined tensor.
  template <class T>
  [[nodiscard]] T* data() const {
    check_dtype(dtype_of<T>, "Tensor::data");
    return static_cast<T*>(data_ptr());
  }
  // "float32[2, 3] on cuda:0" — for error messages.
  // @return the description ("undefined tensor" for an undefined one)
  [[nodiscard]] std::string description() const;
  // "[2, 3]".
  // @return the shape as text
  [[nodiscard]] std::string shape_string() const;

  // --- views (share storage; no copy, no stream) ---
  // The transpose of a 2-D tensor.
  // @return transpose(0, 1)
  // @throws InvalidArgumentError for another rank.
  // @throws StateError for an undefined tensor.
  [[nodiscard]] Tensor t() const;
  // A view with two dimensions swapped (torch.transpose); negative dims count from the end.
  // @param dim0 one dimension, in [-dim(), dim())
  // @param dim1 the other
  // @return the view, sharing the storage
  // @throws InvalidArgumentError for a dimension out of range.
  // @throws StateError for an undefined tensor.
  [[nodiscard]] Tensor transpose(int dim0, int dim1) const;
  // Same storage, new sizes; one size may be -1.
  // @param sizes the new shape, with as many elements as this one; one size may be -1 (inferred)
  // @return the view, sharing the storage
  // @throws InvalidArgumentError when the element count differs or the strides do not allow it
  //   (use reshape).
  // @throws StateError for an undefined tensor.
  [[nodiscard]] Tensor view(const Shape& sizes) const;
  // Elements [start, end) of `dim` in steps of `step` (> 0); start/end are clamped as in Python.
  // @param dim the dimension sliced, in [-dim(), dim())
  // @param start the first index (negative: from the end)
  // @param end the index after the last (negative: from the end)
  // @param step the step, at least 1
  // @return the view, sharing the storage (possibly empty)
  // @throws InvalidArgumentError for a dimension out of range or a step below 1.
  // @throws StateError for an undefined tensor.
  [[nodiscard]] Tensor slice(int dim, std::int64_t start, std::int64_t end,
                             std::int64_t step = 1) const;
  // Reinterprets the bytes as another dtype of the same element size (float32 <-> int32, ...).
  // @param dtype the dtype read, with element_size(dtype) == element_size()
  // @return the view, same sizes and strides, sharing the storage
  // @throws InvalidArgumentError when the element sizes differ.
  // @throws StateError for an undefined tensor.
  [[nodiscard]] Tensor view_as(DType dtype) const;
  // torch.view_as_real: a complex64 (complex128) tensor's parts as float32 (float64) with a
  // last dimension of 2.
  // @return the view, sharing the storage
  // @throws InvalidArgumentError for a tensor that is not complex.
  // @throws StateError for an undefined tensor.
  [[nodiscard]] Tensor view_as_real() const;

  // --- copies (queued on `stream`) ---
  // view() when possible, otherwise a contiguous copy with the new sizes.
  // @param sizes the new shape; one size may be -1 (inferred)
  // @param stream the copy's stream when one is needed (default: the current stream of the
  //   tensor's device); the call returns before the copy completes
  // @return a view, or a new tensor
  // @throws InvalidArgumentError when the element count differs.
  // @throws StateError for an undefined tensor.
  [[nodiscard]] Tensor reshape(const Shape& sizes, OptionalStream stream = {}) const;
  // *this if contiguous, otherwise a contiguous copy.
  // @param stream the copy's stream (default: the current stream of the tensor's device); the
  //   call returns before the copy completes (host tensors are copied before it returns)
  // @return *this or the copy
  // @throws StateError for an undefined tensor.
  // @throws OutOfMemoryError when the copy cannot be allocated.
  [[nodiscard]] Tensor contiguous(OptionalStream stream = {}) const;
  // Copies `src` into *this: same shape (or broadcastable to it), any dtypes (converted), any
  // devices (host<->device, device<->device). The stream is the destination's when it is a CUDA
  // tensor, else the source's. A copy to host memory has finished when copy_ returns, unless
  // `non_blocking` and the host memory is pinned; a copy from host memory may return earlier
  // (from pinned memory the source must then stay untouched until the stream reaches it).
  // A copy from another CUDA device waits (on the destination's stream) for the source's current
  // stream, then copies peer to peer.
  // @param src the source: a shape that broadcasts to this one, any dtype convertible to this
  //   one (can_cast), any device
  // @param stream the stream of the copy (see above); default: the current stream of that
  //   tensor's device
  // @param non_blocking for a device-to-host copy into a pinned, contiguous tensor of src's shape
  //   and dtype: return without waiting for the copy (synchronize the stream before reading);
  //   ignored otherwise
  // @return *this
  // @throws InvalidArgumentError for shapes that do not match (naming both), a dtype pair that
  //   does not convert (float4_e2m1fn_x2 with another) or a stream of another device.
  // @throws StateError for an undefined tensor.
  // @throws CudaError when a copy fails.
  Tensor& copy_(const Tensor& src, OptionalStream stream = {}, bool non_blocking = false);
  // A copy on `device` (*this when already there and `dtype` matches).
  // @param device the destination
  // @param stream the copy's stream (as copy_); a copy to the host is finished when it returns,
  //   one to a CUDA device is queued
  // @return *this when already on `device`, else a new contiguous tensor there
  // @throws StateError for an undefined tensor.
  // @throws OutOfMemoryError when the copy cannot be allocated.
  [[nodiscard]] Tensor to(Device device, OptionalStream stream = {}) const;
  // A copy converted to `dtype` on the same device (torch's tensor.to(dtype)).
  // @param dtype the new element type (can_cast(dtype(), dtype))
  // @param stream the conversion's stream (default: the current stream of the tensor's device);
  //   the call returns before a CUDA conversion completes
  // @return *this when the dtype already matches, else a new contiguous tensor
  // @throws InvalidArgumentError when the dtypes do not convert.
  // @throws StateError for an undefined tensor.
  [[nodiscard]] Tensor to(DType dtype, OptionalStream stream = {}) const;
  // A contiguous host copy; finished when it returns.
  // @param stream the stream the device-to-host copy is queued on and then synchronized
  //   (default: the current stream of the tensor's device)
  // @return a contiguous host tensor (*this for one already contiguous on the host)
  // @throws StateError for an undefined tensor.
  [[nodiscard]] Tensor to_host(OptionalStream stream = {}) const;
  // The elements in row-major order, converted to T. Waits for the copy.
  // @tparam T an element type with a DType (has_dtype<T>)
  // @param stream the stream of the conversion and the copy, synchronized before returning
  // @return numel() values
  // @throws InvalidArgumentError when the dtype does not convert to T's.
  // @throws StateError for an undefined tensor.
  template <class T>
  [[nodiscard]] std::vector<T> to_vector(OptionalStream stream = {}) const {
    const Tensor host = to(dtype_of<T>, stream).to_host(stream);
    const T* p = static_cast<const T*>(host.data_ptr());
    return std::vector<T>(p, p + host.numel());
  }
  // The value of a one-element tensor as a double (torch's item()). Blocks the host until the
  // value is copied.
  // @param stream the stream of the copy, synchronized before returning
  // @return the element, converted to double
  // @throws InvalidArgumentError otherwise (any number of elements but one, or a dtype that
  //   does not convert).
  // @throws StateError for an undefined tensor.
  [[nodiscard]] double item(OptionalStream stream = {}) const;
  // Sets every element to `value` (converted to the dtype). Stream-ordered on `stream` (the
  // current stream of the tensor's device when omitted); returns before a CUDA fill completes.
  // Host tensors are filled before it returns.
  // @param value the value (float4_e2m1fn_x2 takes only 0)
  // @param stream the fill's stream, on the tensor's device
  // @return *this
  // @throws InvalidArgumentError for a nonzero value for float4_e2m1fn_x2, or a stream of another
  //   device.
  // @throws StateError for an undefined tensor.
  Tensor& fill_(double value, OptionalStream stream = {});
  // fill_(0): stream-ordered on `stream` as fill_; returns before a CUDA fill completes.
  // @param stream the fill's stream, on the tensor's device
  // @return *this
  // @throws StateError for an undefined tensor.
  Tensor& zero_(OptionalStream stream = {}) { return fill_(0.0, stream); }

  // Storage::record_stream for this tensor's storage: its memory is not reused before the work
  // queued on `stream` so far completes (torch's Tensor.record_stream). Returns at once.
  // @param stream a stream of the tensor's device that uses the tensor
  // @throws InvalidArgumentError for a stream of another device.
  // @throws StateError for an undefined tensor.
  void record_stream(StreamRef stream) const;
  // The stream work on this tensor goes to: `stream` when given (checked to be on the tensor's
  // device), else the current stream of its device.
  // @param stream the stream asked for, or none
  // @return the stream to queue on
  // @throws StateError for a host tensor or an undefined one.
  // @throws InvalidArgumentError for a stream of another device.
  [[nodiscard]] StreamRef stream_or_current(OptionalStream stream) const;

  // Checks used by operations: throws when the tensor is undefined.
  // @param api the operation's name, used in the message
  // @throws StateError for an undefined tensor.
  void check_defined(const char* api) const;
  // Checks used by operations: throws unless the tensor is defined and of dtype `expected`.
  // @param expected the dtype required
  // @param api the operation's name, used in the message
  // @throws InvalidArgumentError naming `api`, the dtype required and the tensor.
  // @throws StateError for an undefined tensor.
  void check_dtype(DType expected, const char* api) const;

 private:
  std::shared_ptr<Storage> storage_;
  DType dtype_ = DType::float32;
  Shape sizes_;
  Shape strides_;
  std::int64_t offset_ = 0;
};

// Row-major contiguous strides for `sizes`.
// @param sizes a shape
// @return the strides, in elements (a size of 0 counts as 1, so that no stride is 0)
[[nodiscard]] Shape contiguous_strides(const Shape& sizes);
// The product of `sizes`.
// @param sizes a shape
// @return the number of elements (1 for an empty shape)
// @throws InvalidArgumentError for a negative size.
[[nodiscard]] std::int64_t shape_numel(const Shape& sizes);
// "[2, 3]".
// @param sizes a shape
// @return the shape as text
[[nodiscard]] std::string shape_string(const Shape& sizes);

}  // namespace cudakit::tensor
