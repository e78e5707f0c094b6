#include "cudakit/tensor/reduction.hpp"

#include <string>

#include "cudakit/core/error.hpp"
#include "cudakit/tensor/factories.hpp"
#include "tensor/detail/kernel_args.hpp"
#include "cudakit/tensor/detail/layout.hpp"

namespace cudakit::tensor {
namespace {

DType sum_dtype(DType in) { return is_floating(in) ? in : DType::int64; }

// Sums `moved` (the input with the reduced dims last) in segments of `length` into `out`.
void run_reduce(const Tensor& moved, std::int64_t length, Tensor& out, bool mean,
                OptionalStream stream) {
  detail::ReduceArgs args;
  args.in_dtype = moved.dtype();
  args.out_dtype = out.dtype();
  args.in = moved.data_ptr();
  args.in_index = detail::make_indexer(moved);
  args.outputs = out.numel();
  args.length = length;
  args.out = out.data_ptr();
  args.mean = mean;
  if (args.outputs == 0) return;
  if (out.device().is_cpu()) detail::cpu_reduce(args);
  else detail::cuda_reduce(args, out.stream_or_current(stream));
}

Tensor reduce_all(const Tensor& a, bool mean, const char* api, OptionalStream stream) {
  a.check_defined(api);
  check_computing(a.dtype(), api);
  if (mean && (!is_floating(a.dtype()) || a.numel() == 0)) {
    throw InvalidArgumentError(api, "needs a non-empty floating tensor, got " + a.description());
  }
  Tensor out = empty({}, TensorOptions{sum_dtype(a.dtype()), a.device()}, stream);
  run_reduce(a, a.numel(), out, mean, stream);
  return out;
}

Tensor reduce_dim(const Tensor& a, int dim, bool keepdim, bool mean, const char* api,
                  OptionalStream stream) {
  a.check_defined(api);
  check_computing(a.dtype(), api);
  if (a.dim() == 0) {
    throw InvalidArgumentError(api, "cannot reduce a dimension of a 0-dim tensor");
  }
  const int d = dim < 0 ? dim + a.dim() : dim;
  if (d < 0 || d >= a.dim()) {
    throw InvalidArgumentError(api, "dimension " + std::to_string(dim) + " out of range for " +
                                        a.description());
  }
  if (mean && (!is_floating(a.dtype()) || a.size(d) == 0)) {
    throw InvalidArgumentError(api, "needs a floating tensor with a non-empty dimension " +
                                        std::to_string(dim) + ", got " + a.description());
  }
  Shape sizes, strides, out_sizes;
  for (int k = 0; k < a.dim(); ++k) {
    if (k == d) {
      if (keepdim) out_sizes.push_back(1);
      continue;
    }
    sizes.push_back(a.size(k));
    strides.push_back(a.stride(k));
    out_sizes.push_back(a.size(k));
  }
  sizes.push_back(a.size(d));
  strides.push_back(a.stride(d));
  const Tensor moved(a.storage(), a.dtype(), sizes, strides, a.storage_offset());
  Tensor out = empty(out_sizes, TensorOptions{sum_dtype(a.dtype()), a.device()}, stream);
  run_reduce(moved, a.size(d), out, mean, stream);
  return out;
}

}  // namespace

Tensor sum(const Tensor& a, OptionalStream stream) { return reduce_all(a, false, "sum", stream); }
Tensor mean(const Tensor& a, OptionalStream stream) { return reduce_all(a, true, "mean", stream); }
Tensor sum(const Tensor& a, int dim, bool keepdim, OptionalStream stream) {
  return reduce_dim(a, dim, keepdim, false, "sum", stream);
}
Tensor mean(const Tensor& a, int dim, bool keepdim, OptionalStream stream) {
  return reduce_dim(a, dim, keepdim, true, "mean", stream);
}

}  // namespace cudakit::tensor
