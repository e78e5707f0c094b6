// cudakit.matmul's native half: tensor::matmul on cudakit arrays, and TunableOp's GEMM on raw
// device pointers (what cudakit/matmul.py hands over from torch tensors, CuPy arrays or anything
// else with a device pointer and strides), so a product reaches the tuner with no copy.

#include <nanobind/stl/string.h>

#include <cstdint>
#include <string>

#include "common.hpp"
#include "cudakit/core/device.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/tensor/matmul.hpp"
#include "cudakit/tunable/gemm.hpp"

namespace cudakit::python {

namespace {

namespace t = cudakit::tunable;

// The codes cudakit/matmul.py passes (GemmDType's and Epilogue's order).
t::GemmDType gemm_dtype(int code) {
  if (code < 0 || code > static_cast<int>(t::GemmDType::float8_e5m2)) {
    throw InvalidArgumentError("cudakit.matmul", "unknown dtype code " + std::to_string(code));
  }
  return static_cast<t::GemmDType>(code);
}

t::Epilogue epilogue_of(int code) {
  if (code < 0 || code > static_cast<int>(t::Epilogue::bias_gelu)) {
    throw InvalidArgumentError("cudakit.matmul", "unknown epilogue code " + std::to_string(code));
  }
  return static_cast<t::Epilogue>(code);
}

t::ScaleMode scale_mode_of(int code) {
  if (code < 0 || code > static_cast<int>(t::ScaleMode::blk128x128)) {
    throw InvalidArgumentError("cudakit.matmul", "unknown scale mode code " + std::to_string(code));
  }
  return static_cast<t::ScaleMode>(code);
}

template <class T>
T* pointer(std::uintptr_t address) {
  return reinterpret_cast<T*>(address);
}

}  // namespace

void bind_matmul(nb::module_& m) {
  m.def("_matmul", [](const PyArray& a, const PyArray& b, const PyStream* s) {
    return PyArray{tensor::matmul(a.tensor, b.tensor, optional_stream(s)), false};
  }, nb::arg("a"), nb::arg("b"), nb::arg("stream").none() = nb::none(),
     "[m, k] x [k, n] (optionally batched) of two arrays; TunableOp picks the implementation when enabled.");

  // One column-major GEMM, D = alpha * op(A) op(B) (+ beta * C) with C = D (ldc apart), in the
  // cuBLAS terms of tunable::GemmKey. `op` is GemmOp's code (0 gemm, 1 strided batched, 2 with an
  // epilogue, 3 scaled float8; scale_a_mode and scale_b_mode ScaleMode's codes); `stream` a
  // cudaStream_t's address (0: the legacy default stream), on `device`. The GIL is released for the call: the tuner may time candidates for a while.
  m.def("_gemm",
        [](int op, char transa, char transb, std::int64_t m, std::int64_t n, std::int64_t k, std::uintptr_t a,
           std::int64_t lda, std::uintptr_t b, std::int64_t ldb, std::uintptr_t c, std::int64_t ldc, int ab_type,
           int c_type, std::int64_t batch, std::int64_t stride_a, std::int64_t stride_b, std::int64_t stride_c,
           double alpha, double beta, std::uintptr_t bias, int epilogue, std::uintptr_t scale_a,
           std::uintptr_t scale_b, std::uintptr_t stream, int device, bool tf32, int scale_a_mode,
           int scale_b_mode) {
          if (op < 0 || op > static_cast<int>(t::GemmOp::scaled_gemm)) {
            throw InvalidArgumentError("cudakit.matmul", "unknown GEMM op code " + std::to_string(op));
          }
          t::GemmArgs args;
          t::GemmKey& key = args.key;
          key.op = static_cast<t::GemmOp>(op);
          key.transa = transa;
          key.transb = transb;
          key.m = m, key.n = n, key.k = k;
          key.lda = lda, key.ldb = ldb, key.ldc = ldc;
          key.a_type = key.b_type = gemm_dtype(ab_type);
          key.c_type = gemm_dtype(c_type);
          key.tf32 = tf32;
          key.epilogue = epilogue_of(epilogue);
          key.scale_a_mode = scale_mode_of(scale_a_mode);
          key.scale_b_mode = scale_mode_of(scale_b_mode);
          if (key.op == t::GemmOp::gemm_strided_batched) {
            key.batch = batch;
            key.stride_a = stride_a, key.stride_b = stride_b, key.stride_c = stride_c;
          }
          args.a = pointer<const void>(a);
          args.b = pointer<const void>(b);
          args.c = pointer<void>(c);
          args.bias = pointer<const void>(bias);
          args.scale_a = pointer<const float>(scale_a);
          args.scale_b = pointer<const float>(scale_b);
          args.alpha = alpha;
          args.beta = beta;
          const int dev = device >= 0 ? device : cudakit::current_device();
          const StreamRef ref(reinterpret_cast<cudaStream_t>(stream), dev);
          nb::gil_scoped_release release;
          t::gemm(args, ref);
        },
        nb::arg("op"), nb::arg("transa"), nb::arg("transb"), nb::arg("m"), nb::arg("n"), nb::arg("k"), nb::arg("a"),
        nb::arg("lda"), nb::arg("b"), nb::arg("ldb"), nb::arg("c"), nb::arg("ldc"), nb::arg("ab_type"),
        nb::arg("c_type"), nb::arg("batch"), nb::arg("stride_a"), nb::arg("stride_b"), nb::arg("stride_c"),
        nb::arg("alpha"), nb::arg("beta"), nb::arg("bias"), nb::arg("epilogue"), nb::arg("scale_a"),
        nb::arg("scale_b"), nb::arg("stream"), nb::arg("device"), nb::arg("tf32"), nb::arg("scale_a_mode") = 0,
        nb::arg("scale_b_mode") = 0);
}

}  // namespace cudakit::python
