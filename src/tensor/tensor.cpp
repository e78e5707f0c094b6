#include "cudakit/tensor/tensor.hpp"

#include <algorithm>
#include <numeric>
#include <sstream>

#include "cudakit/core/current_stream.hpp"
#include "cudakit/core/copy.hpp"
#include "cudakit/core/device_guard.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/tensor/elementwise.hpp"
#include "cudakit/tensor/factories.hpp"
#include "tensor/detail/kernel_args.hpp"
#include "cudakit/tensor/detail/layout.hpp"

namespace cudakit::tensor {

Shape contiguous_strides(const Shape& sizes) {
  Shape strides(sizes.size());
  std::int64_t stride = 1;
  for (std::size_t d = sizes.size(); d-- > 0;) {
    strides[d] = stride;
    stride *= std::max<std::int64_t>(sizes[d], 1);
  }
  return strides;
}

std::int64_t shape_numel(const Shape& sizes) {
  std::int64_t n = 1;
  for (const std::int64_t s : sizes) {
    if (s < 0) throw InvalidArgumentError("shape", "negative size in " + tensor::shape_string(sizes));
    n *= s;
  }
  return n;
}

std::string shape_string(const Shape& sizes) {
  std::ostringstream out;
  out << "[";
  for (std::size_t d = 0; d < sizes.size(); ++d) out << (d ? ", " : "") << sizes[d];
  out << "]";
  return out.str();
}

Tensor::Tensor(std::shared_ptr<Storage> storage, DType dtype, Shape sizes, Shape strides,
               std::int64_t storage_offset)
    : storage_(std::move(storage)), dtype_(dtype), sizes_(std::move(sizes)),
      strides_(std::move(strides)), offset_(storage_offset) {
  if (storage_ == nullptr) throw InvalidArgumentError("Tensor", "null storage");
  if (sizes_.size() != strides_.size()) {
    throw InvalidArgumentError("Tensor", "sizes " + tensor::shape_string(sizes_) + " and strides " +
                                             tensor::shape_string(strides_) + " differ in length");
  }
  if (sizes_.size() > static_cast<std::size_t>(detail::kMaxDims)) {
    throw InvalidArgumentError("Tensor", "at most 8 dimensions, got " + tensor::shape_string(sizes_));
  }
  const std::int64_t n = shape_numel(sizes_);
  // The lowest and highest element reached must lie inside the storage.
  std::int64_t lo = offset_, hi = offset_;
  for (std::size_t d = 0; d < sizes_.size() && n > 0; ++d) {
    const std::int64_t reach = (sizes_[d] - 1) * strides_[d];
    (reach < 0 ? lo : hi) += reach;
  }
  const auto capacity = static_cast<std::int64_t>(storage_->nbytes() / element_size());
  if (n > 0 && (lo < 0 || hi >= capacity)) {
    throw InvalidArgumentError("Tensor", "view " + tensor::shape_string(sizes_) + " with strides " +
                                             tensor::shape_string(strides_) + " at offset " +
                                             std::to_string(offset_) + " reaches outside a "
                                             "storage of " + std::to_string(capacity) + " " +
                                             std::string(dtype_name(dtype_)) + " elements");
  }
}

void Tensor::check_defined(const char* api) const {
  if (!defined()) throw StateError(api, "the tensor is undefined (default-constructed)");
}

void Tensor::check_dtype(DType expected, const char* api) const {
  check_defined(api);
  if (dtype_ != expected) {
    throw InvalidArgumentError(api, "expected a " + std::string(dtype_name(expected)) +
                                        " tensor, got " + description());
  }
}

Device Tensor::device() const {
  check_defined("Tensor::device");
  return storage_->device();
}

static int wrap_dim(int dim, int ndim, const char* api) {
  const int wrapped = dim < 0 ? dim + ndim : dim;
  if (wrapped < 0 || wrapped >= ndim) {
    throw InvalidArgumentError(api, "dimension " + std::to_string(dim) + " out of range for a " +
                                        std::to_string(ndim) + "-dimensional tensor");
  }
  return wrapped;
}

std::int64_t Tensor::size(int dim) const { return sizes_[wrap_dim(dim, this->dim(), "Tensor::size")]; }
std::int64_t Tensor::stride(int dim) const {
  return strides_[wrap_dim(dim, this->dim(), "Tensor::stride")];
}
std::int64_t Tensor::numel() const noexcept {
  std::int64_t n = 1;
  for (const std::int64_t s : sizes_) n *= s;
  return n;
}
std::size_t Tensor::element_size() const noexcept { return tensor::element_size(dtype_); }

bool Tensor::is_contiguous() const noexcept {
  std::int64_t expected = 1;
  for (std::size_t d = sizes_.size(); d-- > 0;) {
    if (sizes_[d] == 1) continue;
    if (sizes_[d] == 0) return true;
    if (strides_[d] != expected) return false;
    expected *= sizes_[d];
  }
  return true;
}

void* Tensor::data_ptr() const {
  check_defined("Tensor::data_ptr");
  return static_cast<char*>(storage_->data()) + offset_ * static_cast<std::int64_t>(element_size());
}

std::string Tensor::shape_string() const { return tensor::shape_string(sizes_); }

std::string Tensor::description() const {
  if (!defined()) return "undefined tensor";
  return std::string(dtype_name(dtype_)) + shape_string() + " on " + device().str();
}

Tensor Tensor::t() const {
  check_defined("Tensor::t");
  if (dim() != 2) {
    throw InvalidArgumentError("Tensor::t", "expects a 2-D tensor, got " + description());
  }
  return transpose(0, 1);
}

Tensor Tensor::transpose(int dim0, int dim1) const {
  check_defined("Tensor::transpose");
  dim0 = wrap_dim(dim0, dim(), "Tensor::transpose");
  dim1 = wrap_dim(dim1, dim(), "Tensor::transpose");
  Shape sizes = sizes_, strides = strides_;
  std::swap(sizes[dim0], sizes[dim1]);
  std::swap(strides[dim0], strides[dim1]);
  return Tensor(storage_, dtype_, std::move(sizes), std::move(strides), offset_);
}

// `sizes` with a -1 resolved against `numel`. @throws InvalidArgumentError if impossible.
static Shape infer_sizes(const Shape& sizes, std::int64_t numel, const std::string& what,
                         const char* api) {
  Shape out = sizes;
  std::int64_t known = 1;
  int infer = -1;
  for (std::size_t d = 0; d < out.size(); ++d) {
    if (out[d] == -1 && infer < 0) infer = static_cast<int>(d);
    else if (out[d] < 0) throw InvalidArgumentError(api, "invalid shape " + tensor::shape_string(sizes));
    else known *= out[d];
  }
  if (infer >= 0 && known > 0 && numel % known == 0) out[infer] = numel / known;
  if ((infer >= 0 && (known == 0 || numel % known != 0)) || shape_numel(out) != numel) {
    throw InvalidArgumentError(api, "shape " + tensor::shape_string(sizes) + " is invalid for " + what +
                                        " (" + std::to_string(numel) + " elements)");
  }
  return out;
}

// Strides for viewing a tensor of (sizes, strides) as new_sizes without a copy, if possible
// (the same rule as torch's computeStride: each run of merged old dims must be contiguous).
static bool view_strides(const Shape& sizes, const Shape& strides, const Shape& new_sizes,
                         Shape& new_strides) {
  new_strides.assign(new_sizes.size(), 0);
  if (shape_numel(sizes) == 0) {
    new_strides = contiguous_strides(new_sizes);
    return true;
  }
  std::int64_t view_d = static_cast<std::int64_t>(new_sizes.size()) - 1;
  std::int64_t chunk_base_stride = strides.empty() ? 1 : strides.back();
  std::int64_t tensor_numel = 1, view_numel = 1;
  for (std::int64_t d = static_cast<std::int64_t>(sizes.size()) - 1; d >= 0; --d) {
    tensor_numel *= sizes[d];
    if (d == 0 || (sizes[d - 1] != 1 && strides[d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || new_sizes[view_d] == 1)) {
        new_strides[view_d] = view_numel * chunk_base_stride;
        view_numel *= new_sizes[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return false;
      if (d > 0) {
        chunk_base_stride = strides[d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  return view_d == -1;
}

Tensor Tensor::view(const Shape& sizes) const {
  check_defined("Tensor::view");
  const Shape resolved = infer_sizes(sizes, numel(), description(), "Tensor::view");
  Shape strides;
  if (!view_strides(sizes_, strides_, resolved, strides)) {
    throw InvalidArgumentError("Tensor::view", "cannot view " + description() + " with strides " +
                                                   tensor::shape_string(strides_) + " as " +
                                                   tensor::shape_string(resolved) +
                                                   " without a copy; use reshape()");
  }
  return Tensor(storage_, dtype_, resolved, std::move(strides), offset_);
}

Tensor Tensor::reshape(const Shape& sizes, OptionalStream stream) const {
  check_defined("Tensor::reshape");
  const Shape resolved = infer_sizes(sizes, numel(), description(), "Tensor::reshape");
  Shape strides;
  if (view_strides(sizes_, strides_, resolved, strides)) {
    return Tensor(storage_, dtype_, resolved, std::move(strides), offset_);
  }
  return contiguous(stream).view(resolved);
}

Tensor Tensor::slice(int dim, std::int64_t start, std::int64_t end, std::int64_t step) const {
  check_defined("Tensor::slice");
  const int d = wrap_dim(dim, this->dim(), "Tensor::slice");
  if (step <= 0) {
    throw InvalidArgumentError("Tensor::slice", "step must be positive, got " + std::to_string(step));
  }
  const std::int64_t n = sizes_[d];
  if (start < 0) start += n;
  if (end < 0) end += n;
  start = std::clamp<std::int64_t>(start, 0, n);
  end = std::clamp<std::int64_t>(end, start, n);
  Shape sizes = sizes_, strides = strides_;
  sizes[d] = (end - start + step - 1) / step;
  strides[d] = strides_[d] * step;
  return Tensor(storage_, dtype_, std::move(sizes), std::move(strides),
                offset_ + start * strides_[d]);
}

Tensor Tensor::view_as(DType dtype) const {
  check_defined("Tensor::view_as");
  if (tensor::element_size(dtype) != element_size()) {
    throw InvalidArgumentError("Tensor::view_as", "cannot view " + description() + " as " +
                                                      std::string(dtype_name(dtype)) +
                                                      ": element sizes differ");
  }
  return Tensor(storage_, dtype, sizes_, strides_, offset_);
}

Tensor Tensor::view_as_real() const {
  check_defined("Tensor::view_as_real");
  if (!is_complex(dtype_)) {
    throw InvalidArgumentError("Tensor::view_as_real", "expects a complex tensor, got " + description());
  }
  Shape sizes = sizes_, strides = strides_;
  for (std::int64_t& s : strides) s *= 2;
  sizes.push_back(2);
  strides.push_back(1);
  return Tensor(storage_, dtype_ == DType::complex64 ? DType::float32 : DType::float64, std::move(sizes),
                std::move(strides), offset_ * 2);
}

StreamRef Tensor::stream_or_current(OptionalStream stream) const {
  const Device dev = device();
  if (dev.is_cpu()) {
    throw StateError("Tensor::stream_or_current", "a host tensor has no stream: " + description());
  }
  if (!stream) return current_stream(dev.index);
  if (stream->device() != dev.index) {
    throw InvalidArgumentError("stream", "a stream of cuda:" + std::to_string(stream->device()) +
                                             " was given for " + description());
  }
  return *stream;
}

Tensor Tensor::contiguous(OptionalStream stream) const {
  check_defined("Tensor::contiguous");
  if (is_contiguous()) return *this;
  Tensor out = empty(sizes_, TensorOptions{dtype_, device()}, stream);
  out.copy_(*this, stream);
  return out;
}

// dst <- src (broadcast to dst's shape, converted), both on one device.
static void copy_on_device(Tensor& dst, const Tensor& src, OptionalStream stream) {
  const Device dev = dst.device();
  if (dst.numel() == 0) return;
  const bool same_layout = dst.dtype() == src.dtype() && dst.sizes() == src.sizes() &&
                           dst.is_contiguous() && src.is_contiguous();
  if (same_layout && dev.is_cuda()) {
    const StreamRef s = dst.stream_or_current(stream);
    memcpy_async(dst.data_ptr(), src.data_ptr(), dst.nbytes(),
                 cudaMemcpyDeviceToDevice, s);
    return;
  }
  detail::ElementwiseArgs args;
  args.arity = 1;
  args.op = static_cast<std::uint8_t>(detail::UnaryOp::cast);
  // float4_e2m1fn_x2 only copies to itself (copy_ checks): its bytes move as uint8.
  const bool packed = dst.dtype() == DType::float4_e2m1fn_x2;
  args.out_dtype = packed ? DType::uint8 : dst.dtype();
  args.in_dtype = packed ? DType::uint8 : src.dtype();
  args.numel = dst.numel();
  args.out = dst.data_ptr();
  args.in[0] = src.data_ptr();
  const auto idx = detail::make_indexers(dst.sizes(), {&dst, &src});
  args.out_index = idx[0];
  args.in_index[0] = idx[1];
  args.contiguous = dst.is_contiguous() && src.is_contiguous() && dst.sizes() == src.sizes();
  if (dev.is_cpu()) detail::cpu_elementwise(args);
  else detail::cuda_elementwise(args, dst.stream_or_current(stream));
}

Tensor& Tensor::copy_(const Tensor& src, OptionalStream stream, bool non_blocking) {
  check_defined("Tensor::copy_");
  src.check_defined("Tensor::copy_");
  // The source must broadcast to the destination's shape.
  bool fits = true;
  try {
    fits = broadcast_shapes(sizes_, src.sizes_) == sizes_;
  } catch (const InvalidArgumentError&) {
    fits = false;
  }
  if (!fits) {
    throw InvalidArgumentError("Tensor::copy_", "cannot copy " + src.description() + " into " +
                                                    description() + ": shapes do not match");
  }
  if (!can_cast(src.dtype_, dtype_)) {
    throw InvalidArgumentError("Tensor::copy_", "cannot convert " + src.description() + " to " +
                                                    std::string(dtype_name(dtype_)) +
                                                    ": float4_e2m1fn_x2 is storage only and "
                                                    "copies to itself alone, as in torch");
  }
  const Device dst_dev = device(), src_dev = src.device();
  if (dst_dev == src_dev) {
    copy_on_device(*this, src, stream);
    return *this;
  }
  // Across devices: bring the source, as a contiguous buffer of the destination's dtype and the
  // source's shape, to the destination's side, then copy (broadcast, strided) there.
  const bool direct = src.sizes_ == sizes_ && is_contiguous() && dtype_ == src.dtype_;
  if (src_dev.is_cpu()) {  // host -> device
    const StreamRef s = stream_or_current(stream);
    const Tensor staged = src.to(dtype_).contiguous();
    Tensor target = direct ? *this : empty(src.sizes_, TensorOptions{dtype_, dst_dev}, s);
    DeviceGuard guard(dst_dev.index);
    memcpy_async(target.data_ptr(), staged.data_ptr(), staged.nbytes(),
                 cudaMemcpyHostToDevice, s);
    // A pageable `staged` has been read into CUDA's staging buffer when the call returns; a
    // pinned one is read later, by the stream (See the header on copies from pinned memory).
    if (!direct) copy_on_device(*this, target, s);
    return *this;
  }
  const StreamRef s = src.stream_or_current(dst_dev.is_cuda() ? OptionalStream{} : stream);
  const Tensor staged = src.to(dtype_, s).contiguous(s);
  if (dst_dev.is_cpu()) {  // device -> host
    Tensor target = direct ? *this : empty(src.sizes_, TensorOptions{dtype_, dst_dev});
    DeviceGuard guard(src_dev.index);
    memcpy_async(target.data_ptr(), staged.data_ptr(), staged.nbytes(),
                 cudaMemcpyDeviceToHost, s);
    if (!(non_blocking && direct && storage_->is_pinned())) s.synchronize();
    if (!direct) copy_on_device(*this, target, {});
    return *this;
  }
  // device -> another device: peer copy on the destination's stream after the source's work.
  const StreamRef ds = stream_or_current(stream);
  ds.wait_stream(s);
  Tensor target = direct ? *this : empty(src.sizes_, TensorOptions{dtype_, dst_dev}, ds);
  memcpy_peer_async(target.data_ptr(), dst_dev.index, staged.data_ptr(), src_dev.index,
                    staged.nbytes(), ds);
  staged.record_stream(ds);
  if (!direct) copy_on_device(*this, target, ds);
  return *this;
}

Tensor Tensor::to(Device device, OptionalStream stream) const {
  check_defined("Tensor::to");
  if (device == this->device()) return *this;
  Tensor out = empty(sizes_, TensorOptions{dtype_, device}, device.is_cuda() ? stream : OptionalStream{});
  out.copy_(*this, stream);
  return out;
}

Tensor Tensor::to(DType dtype, OptionalStream stream) const {
  check_defined("Tensor::to");
  if (dtype == dtype_) return *this;
  Tensor out = empty(sizes_, TensorOptions{dtype, device()}, stream);
  out.copy_(*this, stream);
  return out;
}

Tensor Tensor::to_host(OptionalStream stream) const {
  check_defined("Tensor::to_host");
  if (device().is_cpu()) return contiguous();
  return to(Device::cpu(), stream);
}

double Tensor::item(OptionalStream stream) const {
  check_defined("Tensor::item");
  if (numel() != 1) {
    throw InvalidArgumentError("Tensor::item", "expects one element, got " + description());
  }
  return to_vector<double>(stream)[0];
}

Tensor& Tensor::fill_(double value, OptionalStream stream) {
  check_defined("Tensor::fill_");
  const bool packed = dtype_ == DType::float4_e2m1fn_x2;
  if (packed && value != 0) {
    throw InvalidArgumentError("Tensor::fill_", "float4_e2m1fn_x2 is storage only: it fills with "
                                                "0 alone, got " + std::to_string(value));
  }
  if (numel() == 0) return *this;
  detail::ElementwiseArgs args;
  args.arity = 0;
  args.op = static_cast<std::uint8_t>(detail::NullaryOp::fill);
  args.out_dtype = packed ? DType::uint8 : dtype_;  // zero bits are two zeros
  args.numel = numel();
  args.out = data_ptr();
  args.out_index = detail::make_indexer(*this);
  args.contiguous = is_contiguous();
  args.scalar0 = value;
  const Device dev = device();
  detail::run_elementwise(args, dev, dev.is_cuda() ? stream_or_current(stream) : StreamRef(nullptr, -1));
  return *this;
}

void Tensor::record_stream(StreamRef stream) const {
  check_defined("Tensor::record_stream");
  storage_->record_stream(stream);
}

}  // namespace cudakit::tensor
