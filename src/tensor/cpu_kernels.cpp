// Host back end of the tensor operations: plain loops over the functors the kernels use.

#include "tensor/detail/elementwise_ops.hpp"
#include "tensor/detail/kernel_args.hpp"

namespace cudakit::tensor::detail {
namespace {

std::int64_t out_offset(const ElementwiseArgs& a, std::int64_t i) {
  return a.contiguous ? i : a.out_index.offset(i);
}
std::int64_t in_offset(const ElementwiseArgs& a, int k, std::int64_t i) {
  return a.contiguous ? i : a.in_index[k].offset(i);
}

struct CpuBackend {
  template <class Out, class F>
  void nullary(const ElementwiseArgs& a, F f) {
    Out* out = static_cast<Out*>(a.out);
    for (std::int64_t i = 0; i < a.numel; ++i) out[out_offset(a, i)] = f(i);
  }
  template <class Out, class In, class F>
  void unary(const ElementwiseArgs& a, F f) {
    Out* out = static_cast<Out*>(a.out);
    const In* in = static_cast<const In*>(a.in[0]);
    for (std::int64_t i = 0; i < a.numel; ++i) out[out_offset(a, i)] = f(in[in_offset(a, 0, i)]);
  }
  template <class Out, class In, class F>
  void binary(const ElementwiseArgs& a, F f) {
    Out* out = static_cast<Out*>(a.out);
    const In* x = static_cast<const In*>(a.in[0]);
    const In* y = static_cast<const In*>(a.in[1]);
    for (std::int64_t i = 0; i < a.numel; ++i) {
      out[out_offset(a, i)] = f(x[in_offset(a, 0, i)], y[in_offset(a, 1, i)]);
    }
  }
};

}  // namespace

void cpu_elementwise(const ElementwiseArgs& args) { dispatch_elementwise(args, CpuBackend{}); }

void cpu_reduce(const ReduceArgs& args) {
  visit_dtype(args.in_dtype, [&]<class In>() {
    using Acc = sum_acc_t<In>;
    using Out = sum_out_t<In>;
    const In* in = static_cast<const In*>(args.in);
    Out* out = static_cast<Out*>(args.out);
    for (std::int64_t o = 0; o < args.outputs; ++o) {
      Acc acc = 0;
      for (std::int64_t k = 0; k < args.length; ++k) {
        acc += convert<Acc>(in[args.in_index.offset(o * args.length + k)]);
      }
      if constexpr (is_floating_v<In>) {
        if (args.mean) acc = acc / static_cast<Acc>(args.length);
      }
      out[o] = convert<Out>(acc);
    }
  });
}

std::int64_t cpu_count_mismatches(const CompareArgs& args) {
  return visit_dtype(args.dtype, [&]<class T>() {
    const T* a = static_cast<const T*>(args.a);
    const T* b = static_cast<const T*>(args.b);
    std::int64_t count = 0;
    for (std::int64_t i = 0; i < args.numel; ++i) {
      count += elements_differ(a[args.a_index.offset(i)], b[args.b_index.offset(i)], args) ? 1 : 0;
    }
    return count;
  });
}

}  // namespace cudakit::tensor::detail
