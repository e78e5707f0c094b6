// libcudakit_torch: cudakit.route_torch()'s kernels for torch's aten::mm, aten::bmm and aten::addmm
// in C++, registered at a dispatch key of torch's dispatcher while a block is open. Built only
// where torch is importable (python/CMakeLists.txt); without it route_torch() registers the same
// kernels written in Python (cudakit/matmul.py). See Note [Routed products in C++].
//
// Note [Routed products in C++]
// A product routed through a Python kernel pays torch's Python dispatcher, the interpreter and a
// torch.empty from Python on every call: tens of microseconds of host time where torch's own mm
// takes a few, which a small-batch forward pass (host-bound: the GPU waits for the next kernel)
// shows as a slower model (notes/tunable.md). Here the kernel is C++ called by the dispatcher as
// torch's own is: the output comes from at::empty (torch's caching allocator), the layouts are
// read from sizes and strides, and the product goes to cudakit::tunable::gemm, the same call the
// Python path makes, on torch's current stream. What this kernel does not take goes to torch's
// own kernel through the op's out= overload (aten::mm.out and the others, not overridden): other
// dtypes, addmm with beta or alpha other than 1 or a bias that is not one row of n, tensors on two
// devices (torch raises its own error). The products taken are the Python kernels' (an operand that
// is neither row- nor column-major made contiguous, as torch's own kernel makes it). The library talks to Python through three C functions
// (ctypes), so it needs neither nanobind nor torch's Python headers; libcudakit is the one the
// extension loaded (the same soname), so TunableOp's switches and results are shared.

#include <ATen/Context.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/addmm.h>
#include <ATen/ops/bmm.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/mm.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/util/Exception.h>
#include <torch/library.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "cudakit/core/error.hpp"
#include "cudakit/tunable/gemm.hpp"

namespace {

namespace t = cudakit::tunable;

std::atomic<std::uint64_t> routed_count{0};

std::optional<t::GemmDType> gemm_dtype(c10::ScalarType type) {
  switch (type) {
    case c10::ScalarType::Float: return t::GemmDType::float32;
    case c10::ScalarType::Half: return t::GemmDType::float16;
    case c10::ScalarType::BFloat16: return t::GemmDType::bfloat16;
    default: return std::nullopt;
  }
}

// One operand's last two dims (rows x cols) as cuBLAS reads them: 'n' for row-major (ld = the row
// stride), 't' for column-major (ld = the column stride); none for any other layout. A dimension
// of size one has no meaningful stride and is read as packed (as cudakit/matmul.py's _operand).
struct Operand {
  char trans = 'n';
  std::int64_t ld = 0;
  std::int64_t batch_stride = 0;
};

std::optional<Operand> operand(const at::Tensor& x) {
  const std::int64_t dims = x.dim();
  const std::int64_t rows = x.size(dims - 2), cols = x.size(dims - 1);
  const std::int64_t sr = x.stride(dims - 2), sc = x.stride(dims - 1);
  Operand o;
  if (rows == 1) {
    if (sc == 1 || cols == 1) {
      o = {'n', std::max<std::int64_t>(cols, 1)};
    } else if (sc >= 1) {
      o = {'t', sc};
    } else {
      return std::nullopt;
    }
  } else if (cols == 1) {
    if (sr == 1) {
      o = {'t', rows};
    } else if (sr >= 1) {
      o = {'n', sr};
    } else {
      return std::nullopt;
    }
  } else if (sc == 1 && sr >= cols) {
    o = {'n', sr};
  } else if (sr == 1 && sc >= rows) {
    o = {'t', sc};
  } else {
    return std::nullopt;
  }
  if (dims == 3 && x.size(0) > 1) o.batch_stride = x.stride(0);
  return o;
}

bool takes(const at::Tensor& a, const at::Tensor& b) {
  return a.is_cuda() && b.device() == a.device() && b.scalar_type() == a.scalar_type() &&
         gemm_dtype(a.scalar_type()).has_value();
}

// a @ b (+ bias) into a new row-major output through cudakit's tuner. a: [m, k] or [batch, m, k];
// b: [k, n] or [batch, k, n]; bias: [n]. An operand cuBLAS cannot read in place (neither row- nor
// column-major) is made contiguous first, as torch's own kernel does; the copy is torch's, freed
// stream-ordered by its allocator after the queued product.
at::Tensor product(const at::Tensor& a_in, const at::Tensor& b_in, const at::Tensor* bias_in) {
  std::optional<Operand> oa = operand(b_in), ob = operand(a_in);  // cuBLAS's A is b, its B is a
  const at::Tensor a = ob ? a_in : a_in.contiguous(), b = oa ? b_in : b_in.contiguous();
  if (!oa) oa = operand(b);
  if (!ob) ob = operand(a);
  std::optional<at::Tensor> packed_bias;
  if (bias_in && bias_in->stride(0) != 1 && bias_in->size(0) > 1) packed_bias = bias_in->contiguous();
  const at::Tensor* bias = packed_bias ? &*packed_bias : bias_in;
  const bool batched = a.dim() == 3;
  const std::int64_t batch = batched ? a.size(0) : 1;
  const std::int64_t m = a.size(-2), k = a.size(-1), n = b.size(-1);
  at::Tensor out = batched ? at::empty({batch, m, n}, a.options()) : at::empty({m, n}, a.options());
  if (m == 0 || n == 0 || batch == 0) return out;
  if (k == 0) return out.zero_();
  const t::GemmDType dtype = *gemm_dtype(a.scalar_type());
  t::GemmArgs args;
  t::GemmKey& key = args.key;
  key.op = bias ? t::GemmOp::gemm_and_bias : (batch > 1 ? t::GemmOp::gemm_strided_batched : t::GemmOp::gemm);
  key.transa = oa->trans;
  key.transb = ob->trans;
  key.m = n, key.n = m, key.k = k;  // out^T (n x m) = b^T (n x k) a^T (k x m)
  key.lda = oa->ld, key.ldb = ob->ld, key.ldc = n;
  key.a_type = key.b_type = key.c_type = dtype;
  key.tf32 = dtype == t::GemmDType::float32 && at::globalContext().allowTF32CuBLAS();
  if (bias) key.epilogue = t::Epilogue::bias;
  if (key.op == t::GemmOp::gemm_strided_batched) {
    key.batch = batch;
    key.stride_a = oa->batch_stride, key.stride_b = ob->batch_stride, key.stride_c = m * n;
  }
  args.a = b.data_ptr();
  args.b = a.data_ptr();
  args.c = out.data_ptr();
  args.bias = bias ? bias->data_ptr() : nullptr;
  const int device = a.get_device();
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream(static_cast<c10::DeviceIndex>(device)).stream();
  try {
    t::gemm(args, cudakit::StreamRef(stream, device));
  } catch (const std::exception& e) {
    TORCH_CHECK(false, "cudakit.route_torch: ", e.what());
  }
  routed_count.fetch_add(1, std::memory_order_relaxed);
  return out;
}

at::Tensor routed_mm(const at::Tensor& a, const at::Tensor& b) {
  if (takes(a, b) && a.dim() == 2 && b.dim() == 2 && a.size(1) == b.size(0)) {
    return product(a, b, nullptr);
  }
  at::Tensor out = at::empty({a.size(0), b.size(-1)}, a.options());
  return at::mm_out(out, a, b);
}

at::Tensor routed_bmm(const at::Tensor& a, const at::Tensor& b) {
  if (takes(a, b) && a.dim() == 3 && b.dim() == 3 && a.size(0) == b.size(0) && a.size(2) == b.size(1)) {
    return product(a, b, nullptr);
  }
  at::Tensor out = at::empty({a.size(0), a.size(1), b.size(-1)}, a.options());
  return at::bmm_out(out, a, b);
}

at::Tensor routed_addmm(const at::Tensor& bias, const at::Tensor& a, const at::Tensor& b, const at::Scalar& beta,
                        const at::Scalar& alpha) {
  const bool plain = !beta.isComplex() && !alpha.isComplex() && beta.toDouble() == 1.0 && alpha.toDouble() == 1.0;
  if (plain && takes(a, b) && bias.device() == a.device() && bias.scalar_type() == a.scalar_type() &&
      a.dim() == 2 && b.dim() == 2 && a.size(1) == b.size(0) && bias.dim() == 1 && bias.size(0) == b.size(1)) {
    return product(a, b, &bias);
  }
  at::Tensor out = at::empty({a.size(0), b.size(-1)}, a.options());
  return at::addmm_out(out, bias, a, b, beta, alpha);
}

// The dispatcher warns that an ATen kernel is overridden: that is the purpose here.
class Quiet final : public c10::WarningHandler {
 public:
  void process(const c10::Warning&) override {}
};

std::mutex registration_mutex;
std::unique_ptr<torch::Library> registration;

void write_error(const std::string& message, char* error, std::size_t size) {
  if (error && size > 0) std::snprintf(error, size, "%s", message.c_str());
}

}  // namespace

extern "C" {

// Registers the three kernels at `dispatch_key` ("CUDA"; another key for tests of the fallbacks):
// 0, or -1 with the reason in `error`. Calling it while registered is an error: the counting of
// blocks is cudakit/matmul.py's.
__attribute__((visibility("default"))) int cudakit_torch_route_start(const char* dispatch_key, char* error,
                                                                     std::size_t error_size) {
  std::lock_guard lock(registration_mutex);
  if (registration) {
    write_error("the products are already routed", error, error_size);
    return -1;
  }
  try {
    Quiet quiet;
    c10::WarningUtils::WarningHandlerGuard guard(&quiet);
    auto library = std::make_unique<torch::Library>(torch::Library::IMPL, "aten", c10::parseDispatchKey(dispatch_key),
                                                    __FILE__, __LINE__);
    library->impl("mm", TORCH_FN(routed_mm));
    library->impl("bmm", TORCH_FN(routed_bmm));
    library->impl("addmm", TORCH_FN(routed_addmm));
    registration = std::move(library);
    return 0;
  } catch (const c10::Error& e) {
    write_error(e.what_without_backtrace(), error, error_size);
    return -1;
  } catch (const std::exception& e) {
    write_error(e.what(), error, error_size);
    return -1;
  }
}

// Removes the registration (torch's own kernels run again); nothing when none is made.
__attribute__((visibility("default"))) void cudakit_torch_route_stop() {
  std::lock_guard lock(registration_mutex);
  registration.reset();
}

// Products routed to cudakit by these kernels so far, in every thread.
__attribute__((visibility("default"))) std::uint64_t cudakit_torch_routed_count() {
  return routed_count.load(std::memory_order_relaxed);
}

// The torch version this library was compiled against (it calls torch's C++ API, whose ABI is
// that version's): cudakit/matmul.py loads it only under the same torch.
__attribute__((visibility("default"))) const char* cudakit_torch_built_for() { return CUDAKIT_TORCH_VERSION; }

}  // extern "C"
