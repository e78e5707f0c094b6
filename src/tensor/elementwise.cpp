#include "cudakit/tensor/elementwise.hpp"

#include <string>

#include "cudakit/core/error.hpp"
#include "cudakit/tensor/factories.hpp"
#include "tensor/detail/kernel_args.hpp"
#include "cudakit/tensor/detail/layout.hpp"

namespace cudakit::tensor {

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  const std::size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t x = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const std::int64_t y = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (x != y && x != 1 && y != 1) {
      throw InvalidArgumentError("broadcast", "shapes " + shape_string(a) + " and " +
                                                  shape_string(b) + " do not broadcast (dimension " +
                                                  std::to_string(i) + ": " + std::to_string(x) +
                                                  " vs " + std::to_string(y) + ")");
    }
    out[i] = x == 1 ? y : x;
  }
  return out;
}

namespace {

void check_arith(const Tensor& a, const char* api, bool floating_only) {
  a.check_defined(api);
  check_computing(a.dtype(), api);
  if (a.dtype() == DType::bool_ || (floating_only && !is_floating(a.dtype()))) {
    throw InvalidArgumentError(api, std::string(floating_only ? "needs a floating dtype"
                                                              : "does not take bool tensors") +
                                        ", got " + a.description());
  }
}

StreamRef stream_for(const Tensor& t, OptionalStream stream) {
  return t.device().is_cuda() ? t.stream_or_current(stream) : StreamRef(nullptr, -1);
}

Tensor binary(const Tensor& a, const Tensor& b, detail::BinaryOp op, const char* api,
              OptionalStream stream) {
  const bool floating_only = op == detail::BinaryOp::div;
  check_arith(a, api, floating_only);
  check_arith(b, api, floating_only);
  if (a.dtype() != b.dtype()) {
    throw InvalidArgumentError(api, "dtypes differ: " + a.description() + " and " +
                                        b.description() + " (convert one with to(dtype))");
  }
  if (a.device() != b.device()) {
    throw InvalidArgumentError(api, "tensors on different devices: " + a.description() +
                                        " and " + b.description());
  }
  Shape shape;
  try {
    shape = broadcast_shapes(a.sizes(), b.sizes());
  } catch (const InvalidArgumentError&) {
    throw InvalidArgumentError(api, "shapes do not broadcast: " + a.description() + " and " +
                                        b.description());
  }
  Tensor out = empty(shape, TensorOptions{a.dtype(), a.device()}, stream);
  detail::ElementwiseArgs args;
  args.arity = 2;
  args.op = static_cast<std::uint8_t>(op);
  args.out_dtype = args.in_dtype = a.dtype();
  args.numel = out.numel();
  args.out = out.data_ptr();
  args.in[0] = a.data_ptr();
  args.in[1] = b.data_ptr();
  const auto idx = detail::make_indexers(shape, {&out, &a, &b});
  args.out_index = idx[0];
  args.in_index[0] = idx[1];
  args.in_index[1] = idx[2];
  args.contiguous = a.sizes() == b.sizes() && a.is_contiguous() && b.is_contiguous();
  if (args.numel > 0) detail::run_elementwise(args, out.device(), stream_for(out, stream));
  return out;
}

Tensor unary(const Tensor& a, detail::UnaryOp op, double scalar, const char* api,
             OptionalStream stream) {
  check_arith(a, api, op == detail::UnaryOp::exp || op == detail::UnaryOp::div_scalar);
  Tensor out = empty(a.sizes(), TensorOptions{a.dtype(), a.device()}, stream);
  detail::ElementwiseArgs args;
  args.arity = 1;
  args.op = static_cast<std::uint8_t>(op);
  args.out_dtype = args.in_dtype = a.dtype();
  args.numel = out.numel();
  args.out = out.data_ptr();
  args.in[0] = a.data_ptr();
  const auto idx = detail::make_indexers(a.sizes(), {&out, &a});
  args.out_index = idx[0];
  args.in_index[0] = idx[1];
  args.contiguous = a.is_contiguous();
  args.scalar0 = scalar;
  if (args.numel > 0) detail::run_elementwise(args, out.device(), stream_for(out, stream));
  return out;
}

}  // namespace

Tensor add(const Tensor& a, const Tensor& b, OptionalStream s) { return binary(a, b, detail::BinaryOp::add, "add", s); }
Tensor sub(const Tensor& a, const Tensor& b, OptionalStream s) { return binary(a, b, detail::BinaryOp::sub, "sub", s); }
Tensor mul(const Tensor& a, const Tensor& b, OptionalStream s) { return binary(a, b, detail::BinaryOp::mul, "mul", s); }
Tensor div(const Tensor& a, const Tensor& b, OptionalStream s) { return binary(a, b, detail::BinaryOp::div, "div", s); }
Tensor add(const Tensor& a, double v, OptionalStream s) { return unary(a, detail::UnaryOp::add_scalar, v, "add", s); }
Tensor sub(const Tensor& a, double v, OptionalStream s) { return unary(a, detail::UnaryOp::sub_scalar, v, "sub", s); }
Tensor mul(const Tensor& a, double v, OptionalStream s) { return unary(a, detail::UnaryOp::mul_scalar, v, "mul", s); }
Tensor div(const Tensor& a, double v, OptionalStream s) { return unary(a, detail::UnaryOp::div_scalar, v, "div", s); }
Tensor relu(const Tensor& a, OptionalStream s) { return unary(a, detail::UnaryOp::relu, 0, "relu", s); }
Tensor neg(const Tensor& a, OptionalStream s) { return unary(a, detail::UnaryOp::neg, 0, "neg", s); }
Tensor exp(const Tensor& a, OptionalStream s) { return unary(a, detail::UnaryOp::exp, 0, "exp", s); }

}  // namespace cudakit::tensor
