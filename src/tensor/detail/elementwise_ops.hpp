#pragma once
// The elementwise, reduction and comparison functors, and the dispatch from run-time dtypes and
// op codes to them. Included by both back ends, each passing its own Backend with
//   template <class Out, class F> void nullary(const ElementwiseArgs&, F);
//   template <class Out, class In, class F> void unary(const ElementwiseArgs&, F);
//   template <class Out, class In, class F> void binary(const ElementwiseArgs&, F);
// so the arithmetic is written once. The op is a run-time field of the functor rather than a
// template parameter: one instantiation per dtype instead of one per (op, dtype), which keeps
// nvcc's time down; the switch is uniform across a launch and costs nothing measurable against
// memory traffic.

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "cudakit/tensor/detail/convert.hpp"
#include "cudakit/core/host_device.hpp"
#include "tensor/detail/kernel_args.hpp"

namespace cudakit::tensor::detail {

template <class T>
inline constexpr bool is_floating_v = std::is_floating_point_v<T> || is_reduced_float_v<T>;

template <class C>
CUDAKIT_HD_INLINE C exp_compute(C x) {
  if constexpr (std::is_same_v<C, float>) return expf(x);
  else if constexpr (std::is_same_v<C, double>) return ::exp(x);
  else return x;  // rejected before dispatch: exp needs a floating dtype
}

template <class T>
struct NullaryFunctor {
  NullaryOp op;
  double a, b;
  CUDAKIT_HD_INLINE T operator()(std::int64_t i) const {
    return op == NullaryOp::fill ? convert<T>(a)
                                 : convert<T>(::fma(static_cast<double>(i), b, a));
  }
};

template <class T>
struct UnaryFunctor {
  using C = compute_t<T>;
  UnaryOp op;
  C s;
  CUDAKIT_HD_INLINE T operator()(T in) const {
    const C x = convert<C>(in);
    C y = x;
    switch (op) {
      case UnaryOp::relu:  // keeps NaN, as torch
        if constexpr (!std::is_unsigned_v<C>) y = x < C(0) ? C(0) : x;
        break;
      case UnaryOp::neg: y = C(0) - x; break;
      case UnaryOp::exp: y = exp_compute(x); break;
      case UnaryOp::add_scalar: y = x + s; break;
      case UnaryOp::sub_scalar: y = x - s; break;
      case UnaryOp::mul_scalar: y = x * s; break;
      case UnaryOp::div_scalar: if constexpr (is_floating_v<T>) y = x / s; break;
      case UnaryOp::cast: break;
    }
    return convert<T>(y);
  }
};

template <class Out, class In>
struct ConvertFunctor {
  CUDAKIT_HD_INLINE Out operator()(In x) const { return convert<Out>(x); }
};

template <class T>
struct BinaryFunctor {
  using C = compute_t<T>;
  BinaryOp op;
  CUDAKIT_HD_INLINE T operator()(T a, T b) const {
    const C x = convert<C>(a);
    const C y = convert<C>(b);
    C z = x;
    switch (op) {
      case BinaryOp::add: z = x + y; break;
      case BinaryOp::sub: z = x - y; break;
      case BinaryOp::mul: z = x * y; break;
      case BinaryOp::div: if constexpr (is_floating_v<T>) z = x / y; break;
    }
    return convert<T>(z);
  }
};

// The accumulation and result types of sum over T.
template <class T>
using sum_acc_t = std::conditional_t<std::is_same_v<T, double>, double,
                                     std::conditional_t<is_floating_v<T>, float, std::int64_t>>;
template <class T>
using sum_out_t = std::conditional_t<is_floating_v<T>, T, std::int64_t>;

template <class T>
CUDAKIT_HD_INLINE bool elements_differ(T a, T b, const CompareArgs& p) {
  if constexpr (is_floating_v<T>) {
    const double x = convert<double>(a);
    const double y = convert<double>(b);
    if (x != x || y != y) return !(p.equal_nan && x != x && y != y);
    if (p.exact) return x != y;
    if (x == y) return false;  // equal infinities
    return !(::fabs(x - y) <= p.atol + p.rtol * ::fabs(y));
  } else {
    return !(a == b);
  }
}

template <class T>
inline constexpr bool is_arith_v = !std::is_same_v<T, bool>;

template <class Backend>
void dispatch_elementwise(const ElementwiseArgs& args, Backend&& backend) {
  if (args.arity == 0) {
    // fill takes every dtype that converts (arange is refused for the others before this).
    visit_convertible_dtype(args.out_dtype, [&]<class T>() {
      backend.template nullary<T>(args, NullaryFunctor<T>{static_cast<NullaryOp>(args.op),
                                                          args.scalar0, args.scalar1});
    });
  } else if (args.arity == 1 && static_cast<UnaryOp>(args.op) == UnaryOp::cast) {
    visit_convertible_dtype(args.out_dtype, [&]<class Out>() {
      visit_convertible_dtype(args.in_dtype, [&]<class In>() {
        backend.template unary<Out, In>(args, ConvertFunctor<Out, In>{});
      });
    });
  } else {
    visit_dtype(args.out_dtype, [&]<class T>() {
      if constexpr (is_arith_v<T>) {
        if (args.arity == 1) {
          backend.template unary<T, T>(
              args, UnaryFunctor<T>{static_cast<UnaryOp>(args.op),
                                    static_cast<compute_t<T>>(args.scalar0)});
        } else {
          backend.template binary<T, T>(args, BinaryFunctor<T>{static_cast<BinaryOp>(args.op)});
        }
      }
    });
  }
}

}  // namespace cudakit::tensor::detail
