#include "cudakit/tensor/factories.hpp"

#include <cmath>
#include <cstring>
#include <string>

#include "cudakit/core/current_stream.hpp"
#include "cudakit/core/error.hpp"
#include "tensor/detail/kernel_args.hpp"

namespace cudakit::tensor {

Tensor empty(const Shape& sizes, const TensorOptions& options, OptionalStream stream) {
  const std::int64_t n = shape_numel(sizes);
  const std::size_t bytes = static_cast<std::size_t>(n) * element_size(options.dtype);
  std::shared_ptr<Storage> storage;
  if (options.device.is_cpu()) {
    storage = Storage::allocate_host(bytes, options.pinned);
  } else {
    if (options.pinned) {
      throw InvalidArgumentError("empty", "pinned is for host tensors; asked for " +
                                              options.device.str());
    }
    const StreamRef s = stream ? *stream : current_stream(options.device.index);
    storage = Storage::allocate(bytes, options.device, s);
  }
  return Tensor(std::move(storage), options.dtype, sizes, contiguous_strides(sizes));
}

Tensor empty_like(const Tensor& like, OptionalStream stream) {
  like.check_defined("empty_like");
  return empty(like.sizes(), TensorOptions{like.dtype(), like.device()}, stream);
}

Tensor full(const Shape& sizes, double value, const TensorOptions& options, OptionalStream stream) {
  Tensor t = empty(sizes, options, stream);
  t.fill_(value, stream);
  return t;
}

Tensor zeros(const Shape& sizes, const TensorOptions& options, OptionalStream stream) {
  return full(sizes, 0.0, options, stream);
}

Tensor ones(const Shape& sizes, const TensorOptions& options, OptionalStream stream) {
  return full(sizes, 1.0, options, stream);
}

Tensor arange(double start, double end, double step, const TensorOptions& options,
              OptionalStream stream) {
  if (step == 0 || !std::isfinite(start) || !std::isfinite(end) || !std::isfinite(step) ||
      (end - start) * step < 0) {
    throw InvalidArgumentError("arange", "invalid range: start " + std::to_string(start) +
                                             ", end " + std::to_string(end) + ", step " +
                                             std::to_string(step));
  }
  check_computing(options.dtype, "arange");
  const auto n = static_cast<std::int64_t>(std::ceil((end - start) / step));
  Tensor t = empty({n}, options, stream);
  if (n == 0) return t;
  detail::ElementwiseArgs args;
  args.arity = 0;
  args.op = static_cast<std::uint8_t>(detail::NullaryOp::arange);
  args.out_dtype = options.dtype;
  args.numel = n;
  args.out = t.data_ptr();
  args.contiguous = true;
  args.scalar0 = start;
  args.scalar1 = step;
  detail::run_elementwise(args, options.device,
                          options.device.is_cuda() ? t.stream_or_current(stream)
                                                   : StreamRef(nullptr, -1));
  return t;
}

Tensor arange(double end, const TensorOptions& options, OptionalStream stream) {
  return arange(0.0, end, 1.0, options, stream);
}

Tensor from_host(const void* data, const Shape& sizes, DType dtype, Device device,
                 OptionalStream stream) {
  Tensor host = empty(sizes, TensorOptions{dtype, Device::cpu()});
  if (host.nbytes() > 0) std::memcpy(host.data_ptr(), data, host.nbytes());
  return device.is_cpu() ? host : host.to(device, stream);
}

}  // namespace cudakit::tensor
