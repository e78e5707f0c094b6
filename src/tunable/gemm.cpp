#include "cudakit/tunable/gemm.hpp"

#include <cublas_v2.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <unordered_map>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/device.hpp"
#include "cudakit/core/device_guard.hpp"
#include "cudakit/core/driver_api.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/core/trace_hooks.hpp"
#include "cudakit/memory/device_allocator.hpp"
#include "cudakit/tensor/cublas_workspace.hpp"
#include "cudakit/tensor/detail/cublas_context.hpp"
#include "cudakit/tensor/detail/cublas_gemm.hpp"
#include "cudakit/tensor/matmul_hook.hpp"
#include "tunable/detail/cutlass_gemm.hpp"
#include "tunable/detail/device_buffer.hpp"
#include "tunable/detail/gemm_runner.hpp"
#include "tunable/detail/gemv.hpp"
#include "tunable/detail/lt_types.hpp"
#include "tunable/detail/operand_bytes.hpp"
#include "tunable/detail/plan.hpp"
#include "tunable/detail/results_store.hpp"

namespace cudakit::tunable {

// Note [TunableOp's hot path]
// A GEMM whose key is known must cost at most ~1 us of host time over the plain cuBLAS call, so
// nothing is built per call: the key is a struct of integers (no strings), hashed into the
// calling thread's table of plans (descriptors, layouts and the rebuilt algorithm, made once:
// cuBLASLt's heuristic is never asked again), and a plan is trusted while the process's state
// generation (bumped when results or options change) is the one it was made under. Only a miss
// takes the results store's lock. The key's device facts are cached too: the workspace size per
// device, and the SM count per (thread, stream) - a green context's stream has fewer SMs than its
// device (cuCtxGetDevResource of the stream's context), and its key must say so.
// Graph capture: a plan that exists runs as it would eagerly (its workspace, when it needs one,
// comes from the caching allocator, which serves captures from the graph's pool), so a tuned
// GEMM is captured and replayed at no extra cost. A key without a result is never tuned during a
// capture (timing and synchronizing are illegal there): Default runs, the key is recorded as
// untuned, and the plan is provisional, looked up again at the first call outside a capture.
namespace {

struct PlanTable {
  std::unordered_map<GemmKey, detail::Plan, GemmKeyHash> plans;
  std::unordered_map<cudaStream_t, int> sm_counts;
};

PlanTable& plan_table() {
  thread_local PlanTable table;
  return table;
}

std::size_t workspace_bytes_of(int device) {
  static std::atomic<std::size_t> cached[64];
  if (device < 0 || device >= 64) return tensor::cublas_workspace_size(device);
  std::size_t bytes = cached[device].load(std::memory_order_relaxed);
  if (bytes == 0) {
    bytes = tensor::cublas_workspace_size(device) + 1;  // +1: 0 is "not cached yet"
    cached[device].store(bytes, std::memory_order_relaxed);
  }
  return bytes - 1;
}

int sm_count_of(StreamRef stream, int device) {
  PlanTable& table = plan_table();
  const auto it = table.sm_counts.find(stream.handle());
  if (it != table.sm_counts.end()) return it->second;
  int count = 0;
  const cudakit::detail::DriverApi& driver = cudakit::detail::driver();
  CUcontext context = nullptr;
  CUdevResource resource{};
  if (driver.cuStreamGetCtx && driver.cuCtxGetDevResource &&
      driver.cuStreamGetCtx(reinterpret_cast<CUstream>(stream.handle()), &context) == CUDA_SUCCESS &&
      driver.cuCtxGetDevResource(context, &resource, CU_DEV_RESOURCE_TYPE_SM) == CUDA_SUCCESS) {
    count = static_cast<int>(resource.sm.smCount);
  }
  if (count <= 0) count = get_device_properties(device).multi_processor_count;
  table.sm_counts.emplace(stream.handle(), count);
  return count;
}

bool is_capturing(StreamRef stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  CUDAKIT_CHECK_CUDA(cudaStreamIsCapturing(stream.handle(), &status));
  return status != cudaStreamCaptureStatusNone;
}

void check_pointers(const GemmArgs& args, const char* api) {
  const GemmKey& key = args.key;
  const auto fail = [&](const std::string& what) {
    throw InvalidArgumentError(api, cudakit::detail::concat(key.op_name(), " ", key.signature(), ": ", what));
  };
  if (key.m == 0 || key.n == 0) return;
  if (!args.c) fail("C is null");
  if (key.k > 0 && (!args.a || !args.b)) fail("A or B is null");
  if (has_bias(key.epilogue) && !args.bias) fail("the epilogue has a bias and the bias pointer is null");
  if (key.op == GemmOp::scaled_gemm) {
    if (!args.scale_a || !args.scale_b) {
      fail(cudakit::detail::concat("ScaledGemm needs scale_a and scale_b (device pointers: ",
                                   scale_elements(key.scale_a_mode, key.m, key.k), " and ",
                                   scale_elements(key.scale_b_mode, key.n, key.k), " floats for scale modes ",
                                   scale_mode_name(key.scale_a_mode), " and ", scale_mode_name(key.scale_b_mode), ")"));
    }
    for (const auto& [name, scale] : {std::pair{"scale_a", args.scale_a}, std::pair{"scale_b", args.scale_b}}) {
      const auto address = reinterpret_cast<std::uintptr_t>(scale);
      if (address % kScaleAlignment != 0) {
        fail(cudakit::detail::concat(name, " at ", static_cast<const void*>(scale), " is ", address % kScaleAlignment,
                                     " bytes past a ", kScaleAlignment, "-byte boundary: cuBLASLt's FP8 GEMMs need each "
                                     "scale ", kScaleAlignment, "-byte aligned (a tensor of its own, or a ",
                                     kScaleAlignment, "-byte slot in a shared buffer)"));
      }
    }
  }
}

}  // namespace

namespace detail {

std::size_t scale_bytes(ScaleMode mode, std::int64_t rows, std::int64_t k) {
  return static_cast<std::size_t>(std::max<std::int64_t>(scale_elements(mode, rows, k), 0)) * sizeof(float);
}

std::array<MemoryAccess, 6> gemm_accesses(const GemmArgs& args) {
  const GemmKey& k = args.key;
  const MemoryAccess::Mode c_mode = args.beta != 0 ? MemoryAccess::Mode::read_write : MemoryAccess::Mode::write;
  const std::size_t c_element = element_size(k.c_type);
  const GemmOperandBytes bytes = gemm_operand_bytes(k);
  return {{{args.a, bytes.a, MemoryAccess::Mode::read, "a"},
           {args.b, bytes.b, MemoryAccess::Mode::read, "b"},
           {args.c, bytes.c, c_mode, "c"},
           {args.bias, args.bias ? static_cast<std::size_t>(std::max<std::int64_t>(k.m, 0)) * c_element : 0,
            MemoryAccess::Mode::read, "bias"},
           {args.scale_a, args.scale_a ? scale_bytes(k.scale_a_mode, k.m, k.k) : 0, MemoryAccess::Mode::read, "scale_a"},
           {args.scale_b, args.scale_b ? scale_bytes(k.scale_b_mode, k.n, k.k) : 0, MemoryAccess::Mode::read, "scale_b"}}};
}

}  // namespace detail

namespace {

// The GEMM as one operation on `stream` for the trace hooks (cuBLAS's and cuBLASLt's kernels are
// not launched through them).
void trace_gemm(const GemmArgs& args, StreamRef stream) {
  if (trace_hooks_active()) [[unlikely]] {
    const auto accesses = detail::gemm_accesses(args);
    cudakit::detail::emit_trace_event({.kind = TraceEventKind::kernel_launch, .device = stream.device(),
                                       .stream = stream.handle(), .name = "tunable.gemm",
                                       .accesses = accesses, .accesses_declared = true});
  }
}

void run_cublas_default(const GemmArgs& args, StreamRef stream) {
  const GemmKey& key = args.key;
  const detail::LtTypes t = detail::lt_types(key);
  cublasHandle_t h = tensor::detail::cublas_handle(stream);
  const float alpha_f = static_cast<float>(args.alpha), beta_f = static_cast<float>(args.beta);
  const bool is_double = key.a_type == GemmDType::float64;
  const void* alpha = is_double ? static_cast<const void*>(&args.alpha) : &alpha_f;
  const void* beta = is_double ? static_cast<const void*>(&args.beta) : &beta_f;
  tensor::detail::cublas_gemm(
      h, {.transa = key.transa == 't' ? CUBLAS_OP_T : CUBLAS_OP_N,
          .transb = key.transb == 't' ? CUBLAS_OP_T : CUBLAS_OP_N, .m = static_cast<int>(key.m),
          .n = static_cast<int>(key.n), .k = static_cast<int>(key.k), .alpha = alpha, .a = args.a, .a_type = t.a,
          .lda = static_cast<int>(key.lda), .stride_a = key.stride_a, .b = args.b, .b_type = t.b,
          .ldb = static_cast<int>(key.ldb), .stride_b = key.stride_b, .beta = beta, .c = args.c, .c_type = t.c,
          .ldc = static_cast<int>(key.ldc), .stride_c = key.stride_c,
          .batch = static_cast<int>(key.batch), .compute = t.compute});
}

// The plan of the calling thread for args.key: the cached one when it is current, else Default
// (TunableOp disabled), the stored result, or a new tuning.
detail::Plan& plan_for(const GemmArgs& args, StreamRef stream) {
  PlanTable& table = plan_table();
  const std::uint64_t generation = detail::state_generation();
  auto it = table.plans.find(args.key);
  if (it != table.plans.end() && it->second.generation == generation &&
      !(it->second.provisional && !is_capturing(stream))) {
    return it->second;
  }
  const GemmKey& key = args.key;
  key.validate("tunable::gemm");
  if (!detail::tunable_enabled()) {
    detail::Plan plan = detail::make_plan(key, Solution::default_solution());
    plan.generation = generation;
    return table.plans.insert_or_assign(key, std::move(plan)).first->second;
  }
  const int device = stream.device();
  std::optional<detail::StoredResult> stored = detail::find_result(device, key);
  detail::Plan plan;
  bool provisional = false;
  if (stored) {
    try {
      plan = detail::make_plan(key, stored->solution);
    } catch (const InvalidArgumentError&) {
      // Stored elsewhere or under another cuBLASLt, and not valid here: tune it again.
      detail::drop_result(device, key);
      stored.reset();
    }
  }
  if (!stored) {
    const TuningOptions options = detail::current_options();
    const bool capturing = is_capturing(stream);
    if (options.tuning && !capturing) {
      const TuningReport report = tune(key, stream);
      plan = detail::make_plan(key, report.chosen);
    } else {
      detail::record_untuned(device, key);
      plan = detail::make_plan(key, Solution::default_solution());
      provisional = capturing;
    }
  }
  plan.generation = detail::state_generation();
  plan.provisional = provisional;
  return table.plans.insert_or_assign(key, std::move(plan)).first->second;
}

GemmArgs completed(const GemmArgs& args, StreamRef stream) {
  GemmArgs full = args;
  const int device = stream.device();
  full.key.workspace_bytes = workspace_bytes_of(device);
  full.key.alignment = alignment_class({args.a, args.b, args.c, has_bias(args.key.epilogue) ? args.bias : nullptr});
  full.key.sm_count = sm_count_of(stream, device);
  return full;
}

// gemm() without reporting the GEMM to the trace hooks (`traced`: the caller has).
void run_gemm(const GemmArgs& args, StreamRef s, bool traced) {
  const GemmArgs full = completed(args, s);
  check_pointers(full, "tunable::gemm");
  DeviceGuard guard(s.device());
  detail::run_plan(plan_for(full, s), full, s, !traced);
}

bool matmul_through_tunable(const tensor::MatmulCall& call) {
  GemmArgs args;
  GemmKey& key = args.key;
  key.op = call.batch > 1 ? GemmOp::gemm_strided_batched : GemmOp::gemm;
  key.transa = call.transa;
  key.transb = call.transb;
  key.m = call.m;
  key.n = call.n;
  key.k = call.k;
  key.lda = call.lda;
  key.ldb = call.ldb;
  key.ldc = call.ldc;
  if (call.batch > 1) {
    key.batch = call.batch;
    key.stride_a = call.stride_a;
    key.stride_b = call.stride_b;
    key.stride_c = call.stride_c;
  }
  switch (call.dtype) {
    case tensor::DType::float32: key.a_type = GemmDType::float32; break;
    case tensor::DType::float16: key.a_type = GemmDType::float16; break;
    case tensor::DType::bfloat16: key.a_type = GemmDType::bfloat16; break;
    case tensor::DType::float64: key.a_type = GemmDType::float64; break;
    default: return false;
  }
  key.b_type = key.c_type = key.a_type;
  args.a = call.a;
  args.b = call.b;
  args.c = call.c;
  run_gemm(args, call.stream, true);  // tensor::matmul reported it, as one operation
  return true;
}

}  // namespace

namespace detail {

bool default_is_lt(const GemmKey& key) {
  return key.op == GemmOp::gemm_and_bias || key.op == GemmOp::scaled_gemm;
}

Plan make_plan(const GemmKey& key, const Solution& solution) {
  Plan plan;
  plan.solution = solution;
  const auto refuse = [&](const char* why) {
    throw InvalidArgumentError("tunable::make_plan", cudakit::detail::concat(solution.name(), " for ", key.op_name(),
                                                                           " ", key.signature(), ": ", why));
  };
  switch (solution.kind) {
    case Solution::Kind::default_:
      if (default_is_lt(key)) {
        plan.lt = std::make_unique<LtDescriptors>(key);
        std::vector<LtAlgo> first = heuristic_algos(*plan.lt, 1);
        if (first.empty()) refuse("cuBLASLt has no algorithm for this problem");
        plan.algo = first.front();
      }
      break;
    case Solution::Kind::lt:
      plan.lt = std::make_unique<LtDescriptors>(key);
      plan.algo = algo_from_config(*plan.lt, solution.lt);
      if (!plan.algo) refuse("cublasLtMatmulAlgoCheck rejects this configuration here");
      break;
    case Solution::Kind::gemv:
      if (!gemv_applicable(key, solution)) refuse("this GEMV kernel does not handle this shape, layout or dtype");
      break;
    case Solution::Kind::cutlass: {
      const auto [major, minor] = get_device_capability();
      if (!cutlass_applicable(key, solution, major * 10 + minor)) {
        refuse("no CUTLASS kernel of this build handles this shape, layout, dtype or device");
      }
      if (!cutlass_built()) refuse("this build of cudakit has no CUTLASS kernels (CUDAKIT_CUTLASS=OFF)");
      break;
    }
  }
  return plan;
}

void run_plan(Plan& plan, const GemmArgs& args, StreamRef stream, bool report) {
  const GemmKey& key = args.key;
  if (key.m == 0 || key.n == 0) return;
  if (report && plan.solution.kind != Solution::Kind::gemv) trace_gemm(args, stream);
  switch (plan.solution.kind) {
    case Solution::Kind::default_:
      if (!plan.lt) return run_cublas_default(args, stream);
      [[fallthrough]];
    case Solution::Kind::lt: {
      plan.lt->set_pointers(args.bias, args.scale_a, args.scale_b);
      DeviceBuffer workspace(plan.algo->workspace_bytes, stream);
      lt_matmul(*plan.lt, &*plan.algo, args.a, args.b, args.c, args.alpha, args.beta, workspace.get(),
                plan.algo->workspace_bytes, stream);
      return;
    }
    case Solution::Kind::gemv: {
      const GemvProblem p = gemv_problem(key, args.a, args.b, args.c, args.bias, args.alpha, args.beta);
      DeviceBuffer workspace(gemv_workspace_bytes(p, plan.solution.gemv_splits), stream);
      launch_gemv(p, plan.solution, workspace.get(), stream, gemm_accesses(args));
      return;
    }
    case Solution::Kind::cutlass: {
      const CutlassProblem p = cutlass_problem(key, args.a, args.b, args.c, args.alpha, args.beta, stream.device());
      DeviceBuffer workspace(cutlass_workspace_bytes(p, plan.solution), stream);
      launch_cutlass(p, plan.solution, workspace.get(), stream);
      return;
    }
  }
}

bool solution_runs_here(const GemmKey& key, const Solution& solution) {
  try {
    (void)make_plan(key, solution);
    return true;
  } catch (const Error&) {
    return false;
  }
}

void route_matmul(bool on) noexcept { tensor::set_matmul_hook(on ? &matmul_through_tunable : nullptr); }

}  // namespace detail

GemmKey complete_key(const GemmArgs& args, OptionalStream stream) {
  return completed(args, stream_or_current(stream)).key;
}

void gemm(const GemmArgs& args, OptionalStream stream) { run_gemm(args, stream_or_current(stream), false); }

void gemm_with_solution(const GemmArgs& args, const Solution& solution, OptionalStream stream) {
  const StreamRef s = stream_or_current(stream);
  const GemmArgs full = completed(args, s);
  check_pointers(full, "tunable::gemm_with_solution");
  full.key.validate("tunable::gemm_with_solution");
  DeviceGuard guard(s.device());
  // Cached like gemm()'s plans, under a key of their own table entry per solution.
  thread_local std::unordered_map<GemmKey, std::vector<detail::Plan>, GemmKeyHash> plans;
  std::vector<detail::Plan>& list = plans[full.key];
  for (detail::Plan& p : list) {
    if (p.solution == solution) return detail::run_plan(p, full, s);
  }
  list.push_back(detail::make_plan(full.key, solution));
  detail::run_plan(list.back(), full, s);
}

}  // namespace cudakit::tunable
