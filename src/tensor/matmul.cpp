#include "cudakit/tensor/matmul.hpp"

#include <cublas_v2.h>

#include <atomic>
#include <string>

#include "cudakit/core/device_guard.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/core/trace_hooks.hpp"
#include "cudakit/tensor/factories.hpp"
#include "cudakit/tensor/matmul_hook.hpp"
#include "cudakit/tensor/detail/convert.hpp"
#include "cudakit/tensor/detail/cublas_context.hpp"
#include "cudakit/tensor/detail/cublas_gemm.hpp"

namespace cudakit::tensor {

// Note [Routing matmul through a hook]
// TunableOp (the tunable layer) picks, per shape, the fastest of cuBLAS, cuBLASLt's algorithms
// and cudakit's own kernels, and matmul is to use that choice. The tunable layer sits above this
// one (it is built on tensor's cuBLAS handles and the caching allocator), so matmul cannot call
// it: that include would point up the layer diagram. Instead tunable installs a function pointer
// here when tuning is enabled; matmul hands it the cuBLAS call it would make, and makes the call
// itself when no hook is installed or the hook declines. Uninstalled, it costs one relaxed atomic
// load per matmul (the pointer is written rarely, by enable/disable, and needs no ordering with
// anything else: the hook reaches only state it publishes itself).
namespace {

std::atomic<MatmulHook> installed_matmul_hook{nullptr};

// A row-major matrix operand seen by column-major cuBLAS: its transpose, read with `op`.
struct Operand {
  Tensor t;  // possibly a contiguous copy
  cublasOperation_t op = CUBLAS_OP_N;
  std::int64_t ld = 0;
  std::int64_t batch_stride = 0;
};

// rows x cols are the last two dims of `t`; a row-major layout (stride (ld, 1)) is cuBLAS's
// untransposed cols x rows matrix, a column-major one (stride (1, ld)) its transpose.
Operand as_operand(const Tensor& t, OptionalStream stream) {
  const int r = t.dim() - 2, c = t.dim() - 1;
  const std::int64_t rows = t.size(r), cols = t.size(c);
  Operand o;
  o.batch_stride = t.dim() == 3 ? t.stride(0) : 0;
  if (t.stride(c) == 1 && t.stride(r) >= std::max<std::int64_t>(cols, 1)) {
    o.t = t;
    o.op = CUBLAS_OP_N;
    o.ld = t.stride(r);
  } else if (t.stride(r) == 1 && t.stride(c) >= std::max<std::int64_t>(rows, 1)) {
    o.t = t;
    o.op = CUBLAS_OP_T;
    o.ld = t.stride(c);
  } else {
    o.t = t.contiguous(stream);
    o.op = CUBLAS_OP_N;
    o.ld = std::max<std::int64_t>(cols, 1);
    o.batch_stride = t.dim() == 3 ? rows * cols : 0;
  }
  if (t.dim() == 3 && t.size(0) == 1) o.batch_stride = 0;
  return o;
}

// The bytes a tensor's elements span (first to last element), as cuBLAS reads or writes them.
MemoryAccess extent(const Tensor& t, MemoryAccess::Mode mode, const char* argument) {
  std::int64_t last = 0;
  for (int d = 0; d < t.dim(); ++d) last += (t.size(d) - 1) * t.stride(d);
  const std::size_t bytes = t.numel() == 0 ? 0 : static_cast<std::size_t>(last + 1) * t.element_size();
  return {t.data_ptr(), bytes, mode, argument};
}

cudaDataType_t cuda_type(DType dtype) {
  switch (dtype) {
    case DType::float16: return CUDA_R_16F;
    case DType::bfloat16: return CUDA_R_16BF;
    case DType::float64: return CUDA_R_64F;
    default: return CUDA_R_32F;
  }
}

void cuda_matmul(const Tensor& a, const Tensor& b, Tensor& out, std::int64_t batch,
                 std::int64_t m, std::int64_t k, std::int64_t n, StreamRef stream) {
  DeviceGuard guard(stream.device());
  const Operand A = as_operand(a, stream), B = as_operand(b, stream);
  const cudaDataType_t type = cuda_type(a.dtype());
  const bool is_double = a.dtype() == DType::float64;
  const float alpha_f = 1.0f, beta_f = 0.0f;
  const double alpha_d = 1.0, beta_d = 0.0;
  const void* alpha = is_double ? static_cast<const void*>(&alpha_d) : &alpha_f;
  const void* beta = is_double ? static_cast<const void*>(&beta_d) : &beta_f;
  // float32 stays float32 (no TF32), as torch's default.
  const cublasComputeType_t compute = is_double ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F;
  // cuBLAS launches on `stream` (its handle is bound to it): one operation there for the trace
  // hooks, with its operands' byte ranges.
  if (trace_hooks_active()) [[unlikely]] {
    const MemoryAccess accesses[] = {extent(A.t, MemoryAccess::Mode::read, "a"),
                                     extent(B.t, MemoryAccess::Mode::read, "b"),
                                     extent(out, MemoryAccess::Mode::write, "out")};
    cudakit::detail::emit_trace_event({.kind = TraceEventKind::kernel_launch, .device = stream.device(),
                                       .stream = stream.handle(), .name = "tensor.matmul (cuBLAS)",
                                       .accesses = accesses, .accesses_declared = true});
  }
  // C^T (n x m) = B^T (n x k) * A^T (k x m), all column-major.
  if (const MatmulHook hook = installed_matmul_hook.load(std::memory_order_relaxed)) {
    MatmulCall call;
    call.transa = B.op == CUBLAS_OP_T ? 't' : 'n';
    call.transb = A.op == CUBLAS_OP_T ? 't' : 'n';
    call.m = n;
    call.n = m;
    call.k = k;
    call.batch = batch;
    call.a = B.t.data_ptr();
    call.lda = B.ld;
    call.stride_a = B.batch_stride;
    call.b = A.t.data_ptr();
    call.ldb = A.ld;
    call.stride_b = A.batch_stride;
    call.c = out.data_ptr();
    call.ldc = n;
    call.stride_c = batch > 1 ? m * n : 0;
    call.dtype = a.dtype();
    call.stream = stream;
    if (hook(call)) return;
  }
  detail::cublas_gemm(detail::cublas_handle(stream),
                      {.transa = B.op, .transb = A.op, .m = static_cast<int>(n), .n = static_cast<int>(m),
                       .k = static_cast<int>(k), .alpha = alpha, .a = B.t.data_ptr(), .a_type = type,
                       .lda = static_cast<int>(B.ld), .stride_a = B.batch_stride, .b = A.t.data_ptr(),
                       .b_type = type, .ldb = static_cast<int>(A.ld), .stride_b = A.batch_stride, .beta = beta,
                       .c = out.data_ptr(), .c_type = type, .ldc = static_cast<int>(n), .stride_c = m * n,
                       .batch = static_cast<int>(batch), .compute = compute});
}

template <class T>
void cpu_matmul(const Tensor& a, const Tensor& b, Tensor& out, std::int64_t batch,
                std::int64_t m, std::int64_t k, std::int64_t n) {
  using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const T* pa = static_cast<const T*>(a.data_ptr());
  const T* pb = static_cast<const T*>(b.data_ptr());
  T* po = static_cast<T*>(out.data_ptr());
  const int ar = a.dim() - 2, br = b.dim() - 2;
  const std::int64_t a_bs = a.dim() == 3 && a.size(0) > 1 ? a.stride(0) : 0;
  const std::int64_t b_bs = b.dim() == 3 && b.size(0) > 1 ? b.stride(0) : 0;
  for (std::int64_t p = 0; p < batch; ++p) {
    for (std::int64_t i = 0; i < m; ++i) {
      for (std::int64_t j = 0; j < n; ++j) {
        C acc = 0;
        for (std::int64_t l = 0; l < k; ++l) {
          acc += tensor::detail::convert<C>(pa[p * a_bs + i * a.stride(ar) + l * a.stride(ar + 1)]) *
                 tensor::detail::convert<C>(pb[p * b_bs + l * b.stride(br) + j * b.stride(br + 1)]);
        }
        po[(p * m + i) * n + j] = tensor::detail::convert<T>(acc);
      }
    }
  }
}

}  // namespace

void set_matmul_hook(MatmulHook hook) noexcept { installed_matmul_hook.store(hook, std::memory_order_relaxed); }
MatmulHook matmul_hook() noexcept { return installed_matmul_hook.load(std::memory_order_relaxed); }

Tensor matmul(const Tensor& a, const Tensor& b, OptionalStream stream) {
  a.check_defined("matmul");
  b.check_defined("matmul");
  const auto mismatch = [&](const std::string& why) {
    return InvalidArgumentError("matmul", why + ": " + a.description() + " x " + b.description());
  };
  if (a.dtype() != b.dtype()) throw mismatch("dtypes differ");
  if (!is_floating(a.dtype()) || is_float8(a.dtype())) {
    throw mismatch("needs float32, float16, bfloat16 or float64 (FP8 goes through tunable's "
                   "scaled GEMM)");
  }
  if (a.device() != b.device()) throw mismatch("tensors on different devices");
  if (a.dim() < 2 || a.dim() > 3 || b.dim() < 2 || b.dim() > 3 || (a.dim() == 2 && b.dim() == 3)) {
    throw mismatch("supports [m, k] x [k, n], [b, m, k] x [b, k, n] and [b, m, k] x [k, n]");
  }
  const std::int64_t m = a.size(-2), k = a.size(-1), n = b.size(-1);
  if (b.size(-2) != k) throw mismatch("inner dimensions differ");
  std::int64_t batch = 1;
  if (a.dim() == 3) {
    batch = a.size(0);
    if (b.dim() == 3 && b.size(0) != batch) throw mismatch("batch sizes differ");
  }
  Shape out_shape = a.dim() == 3 ? Shape{batch, m, n} : Shape{m, n};
  Tensor out = empty(out_shape, TensorOptions{a.dtype(), a.device()}, stream);
  if (out.numel() == 0) return out;
  if (k == 0) return out.zero_(stream);
  if (a.device().is_cpu()) {
    visit_dtype(a.dtype(), [&]<class T>() {
      if constexpr (tensor::detail::is_reduced_float_v<T> || std::is_floating_point_v<T>) {
        cpu_matmul<T>(a, b, out, batch, m, k, n);
      }
    });
  } else {
    cuda_matmul(a, b, out, batch, m, k, n, out.stream_or_current(stream));
  }
  return out;
}

}  // namespace cudakit::tensor
