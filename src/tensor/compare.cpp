#include "cudakit/tensor/compare.hpp"

#include <string>

#include "cudakit/core/error.hpp"
#include "cudakit/tensor/elementwise.hpp"
#include "tensor/detail/kernel_args.hpp"
#include "cudakit/tensor/detail/layout.hpp"

namespace cudakit::tensor {
namespace {

std::int64_t mismatches(const Tensor& a, const Tensor& b, const Shape& shape, bool exact,
                        double rtol, double atol, bool equal_nan, OptionalStream stream) {
  detail::CompareArgs args;
  args.dtype = a.dtype();
  args.numel = shape_numel(shape);
  args.a = a.data_ptr();
  args.b = b.data_ptr();
  const auto idx = detail::make_indexers(shape, {&a, &b});
  args.a_index = idx[0];
  args.b_index = idx[1];
  args.exact = exact;
  args.equal_nan = equal_nan;
  args.rtol = rtol;
  args.atol = atol;
  if (a.device().is_cpu()) return detail::cpu_count_mismatches(args);
  return detail::cuda_count_mismatches(args, a.stream_or_current(stream));
}

void check_pair(const Tensor& a, const Tensor& b, const char* api) {
  a.check_defined(api);
  b.check_defined(api);
  check_computing(a.dtype(), api);
  if (a.dtype() != b.dtype() || a.device() != b.device()) {
    throw InvalidArgumentError(api, "compares tensors of one dtype and device, got " +
                                        a.description() + " and " + b.description());
  }
}

}  // namespace

std::int64_t count_mismatches(const Tensor& a, const Tensor& b, OptionalStream stream) {
  check_pair(a, b, "count_mismatches");
  if (a.sizes() != b.sizes()) {
    throw InvalidArgumentError("count_mismatches", "shapes differ: " + a.description() + " and " +
                                                       b.description());
  }
  return mismatches(a, b, a.sizes(), true, 0, 0, false, stream);
}

bool equal(const Tensor& a, const Tensor& b, OptionalStream stream) {
  check_pair(a, b, "equal");
  return a.sizes() == b.sizes() && mismatches(a, b, a.sizes(), true, 0, 0, false, stream) == 0;
}

bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan,
              OptionalStream stream) {
  check_pair(a, b, "allclose");
  Shape shape;
  try {
    shape = broadcast_shapes(a.sizes(), b.sizes());
  } catch (const InvalidArgumentError&) {
    throw InvalidArgumentError("allclose", "shapes do not broadcast: " + a.description() +
                                               " and " + b.description());
  }
  return mismatches(a, b, shape, false, rtol, atol, equal_nan, stream) == 0;
}

}  // namespace cudakit::tensor
