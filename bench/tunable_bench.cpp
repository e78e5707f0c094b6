// TunableOp on the shapes of bench/tunable_shapes.json: cuBLAS's default, cuBLASLt's first
// heuristic choice and the tuned solution, each timed in the same run with CUDA events over
// inputs cycled through more than twice the L2 cache, in interleaved rounds; TFLOP/s, the
// decode-style shapes as a fraction of their memory-bandwidth bound (peak) and of the measured
// device-to-device copy bandwidth, the tuning time per shape,
// and the host time a tuned call adds over a plain cuBLAS call. One JSON line per shape, then
// one summary line; bench/tunable_table.py prints the table beside torch's
// (bench/torch_tunable_bench.py).
//
//   tunable_bench [SHAPES.json] [--only NAME_SUBSTRING]

#include <cublas_v2.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <iostream>
#include <string>
#include <vector>

#include "cudakit/core/device.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/core/event.hpp"
#include "cudakit/core/stream.hpp"
#include "cudakit/graphs/graph.hpp"
#include "cudakit/graphs/graph_capture.hpp"
#include "cudakit/memory/device_allocator.hpp"
#include "cudakit/tensor/detail/cublas_context.hpp"
#include "cudakit/tunable/gemm.hpp"
#include "cudakit/tunable/tunable.hpp"
#include "support/timing.hpp"
#include "tunable/detail/check_kernels.hpp"
#include "tunable/detail/operand_bytes.hpp"

namespace {

using namespace cudakit;
using namespace cudakit::tunable;

GemmDType parse_type(const std::string& name) {
  if (name == "bfloat16") return GemmDType::bfloat16;
  if (name == "float16") return GemmDType::float16;
  if (name == "float64") return GemmDType::float64;
  if (name == "float8_e4m3") return GemmDType::float8_e4m3;
  return GemmDType::float32;
}

// torch's out[M, N] = A[M, K] @ B[K, N] (layouts of bench/tunable_shapes.json) as cuBLAS's
// column-major C^T = B^T A^T: m = N, n = M.
GemmKey key_of(const nlohmann::json& shape) {
  GemmKey key;
  const std::int64_t M = shape["M"], N = shape["N"], K = shape["K"], batch = shape["batch"];
  const std::string layout = shape["layout"];
  key.m = N;
  key.n = M;
  key.k = K;
  key.a_type = key.b_type = key.c_type = parse_type(shape["dtype"]);
  if (is_float8(key.a_type)) {
    key.op = GemmOp::scaled_gemm;
    key.c_type = GemmDType::bfloat16;
  }
  key.transa = layout == "linear" ? 't' : 'n';  // B = W.t(): W row-major [N, K]
  key.lda = key.transa == 't' ? K : N;
  key.transb = layout == "tn" ? 't' : 'n';      // A = X.t(): X row-major [K, M]
  key.ldb = key.transb == 't' ? M : K;
  key.ldc = N;
  if (batch > 1) {
    key.op = GemmOp::gemm_strided_batched;
    key.batch = batch;
    key.stride_a = K * N;
    key.stride_b = M * K;
    key.stride_c = M * N;
  }
  return key;
}

struct Buffers {
  std::vector<void*> a, b, c;
  float* scales = nullptr;
  std::size_t bytes_per_call = 0;  // A + B + C once: the memory-bound traffic
  ~Buffers() {
    for (auto* list : {&a, &b, &c})
      for (void* p : *list) memory::deallocate(p);
    memory::deallocate(scales);
  }
};

void make_buffers(Buffers& buf, const GemmKey& key, StreamRef stream) {
  const auto [a_bytes, b_bytes, c_bytes] = tunable::detail::gemm_operand_bytes(key);
  const std::size_t a_n = a_bytes / element_size(key.a_type), b_n = b_bytes / element_size(key.b_type);
  const std::size_t per = a_bytes + b_bytes + c_bytes;
  buf.bytes_per_call = per;
  const std::size_t l2 = static_cast<std::size_t>(get_device_properties().l2_cache_size);
  const std::size_t copies = std::clamp<std::size_t>((2 * l2 + per - 1) / per, 1, 32);
  for (std::size_t i = 0; i < copies; ++i) {
    buf.a.push_back(memory::allocate(a_bytes, stream));
    buf.b.push_back(memory::allocate(b_bytes, stream));
    buf.c.push_back(memory::allocate(c_bytes, stream));
    tunable::detail::fill_random(buf.a.back(), key.a_type, a_n, 11 + 2 * i, stream);
    tunable::detail::fill_random(buf.b.back(), key.b_type, b_n, 12 + 2 * i, stream);
  }
  // Two scales, each in a 16-byte slot (tunable::kScaleAlignment: cuBLASLt's FP8 kernels need it).
  constexpr std::size_t kSlot = tunable::kScaleAlignment / sizeof(float);
  buf.scales = static_cast<float*>(memory::allocate(2 * tunable::kScaleAlignment, stream));
  tunable::detail::fill_value(buf.scales, GemmDType::float32, 2 * kSlot, 1.0f, stream);
  stream.synchronize();
}

GemmArgs args_of(const GemmKey& key, const Buffers& buf, std::size_t i) {
  GemmArgs g;
  g.key = key;
  const std::size_t copy = i % buf.a.size();
  g.a = buf.a[copy];
  g.b = buf.b[copy];
  g.c = buf.c[copy];
  g.scale_a = buf.scales;
  g.scale_b = buf.scales + tunable::kScaleAlignment / sizeof(float);
  return g;
}

// `calls` calls of `solution` on consecutive operand copies captured into `graph` (on the capture's
// side stream); false, with the reason, where the solution cannot be captured.
bool capture_calls(graphs::Graph& graph, const GemmKey& key, const Buffers& buf, const Solution& solution, int calls) {
  try {
    graphs::GraphCapture capture(graph);
    for (int i = 0; i < calls; ++i) {
      gemm_with_solution(args_of(key, buf, static_cast<std::size_t>(i)), solution, capture.stream());
    }
    capture.end();
    return true;
  } catch (const Error& e) {
    std::cerr << "tunable_bench: " << solution.name() << " not captured (" << e.what() << "): timed from the host\n";
    return false;
  }
}

enum class Issue { host, graph };

// Median ms per call of each solution: 7 rounds, the solutions in rotating order, each sample
// enough calls to last ~10 ms (See Note [Sustained samples]).
//
// Note [Sustained samples]
// The H200 boosts its clock for short bursts: 1 ms samples gave torch.matmul 758-810 TFLOP/s
// on 4096^3 bf16 where 200 back-to-back calls gave 721 (and cuBLAS through us 695-720),
// because the Python peer's gaps between samples let the card cool. 10 ms of back-to-back
// calls per sample, on both sides, measures the
// sustained rate a training step or a batch of decode steps sees.
//
// Note [Timing decode GEMMs from a graph]
// Issued from the host one by one, a GEMM of ~10 us of GPU work can be timed at the host's pace:
// on the lent VMs cublasLtMatmul alone takes 5-11 us of host time. Decode steps run from CUDA
// graphs in the servers this is for (and TunableOp says a tuned GEMM replays in one at no cost),
// so Issue::graph captures up to 64 calls of a solution on the rotating copies and times
// replays of that graph: the GPU's time per call, the gaps between kernels included. A solution
// that cannot be captured is timed from the host and says so. Issue::host keeps the host-issued
// figure beside it for the decode shapes: it was slower by several percent, more for fp16 and
// fp8, so the host was in the way on some calls, not the bound of the 32 MiB shapes
// (notes/tunable.md has the runs, and the fixed cost a kernel).
std::vector<double> time_distinct_solutions(const GemmKey& key, const Buffers& buf,
                                            const std::vector<Solution>& solutions, StreamRef stream, Issue issue) {
  Event start(EventFlags{.enable_timing = true}), stop(EventFlags{.enable_timing = true});
  std::vector<int> reps(solutions.size(), 1);
  std::vector<std::vector<double>> samples(solutions.size());
  std::vector<std::unique_ptr<graphs::Graph>> captured(solutions.size());
  std::vector<int> graph_calls(solutions.size(), 0);  // 0: timed from the host
  std::size_t call = 0;
  const auto sample = [&](std::size_t s, int n) {
    start.record(stream);
    if (graph_calls[s] > 0) {
      const int replays = std::max(1, n / graph_calls[s]);
      for (int r = 0; r < replays; ++r) captured[s]->replay(stream);
      n = replays * graph_calls[s];
    } else {
      for (int i = 0; i < n; ++i) gemm_with_solution(args_of(key, buf, call++), solutions[s], stream);
    }
    stop.record(stream);
    stop.synchronize();
    return static_cast<double>(start.elapsed_time(stop)) / n;
  };
  for (std::size_t s = 0; s < solutions.size(); ++s) {
    (void)sample(s, 2);  // warm-up
    reps[s] = std::clamp(static_cast<int>(10.0 / std::max(sample(s, 3), 1e-4)), 3, 20000);
    if (issue == Issue::graph) {
      captured[s] = std::make_unique<graphs::Graph>();
      const int calls = std::min(reps[s], 64);
      if (capture_calls(*captured[s], key, buf, solutions[s], calls)) {
        graph_calls[s] = calls;
        (void)sample(s, reps[s]);  // the first replay
      }
    }
  }
  for (int round = 0; round < 7; ++round) {
    for (std::size_t i = 0; i < solutions.size(); ++i) {
      const std::size_t s = (i + static_cast<std::size_t>(round)) % solutions.size();
      samples[s].push_back(sample(s, reps[s]));
    }
  }
  std::vector<double> medians;
  for (auto& v : samples) medians.push_back(bench::median(v));
  return medians;
}

// time_distinct_solutions for `solutions`, a solution listed twice (the tuner kept Default, say)
// timed once: two timings of one solution differ by the benchmark's own spread alone (a few
// percent on an fp8 shape, notes/tunable.md), which would read as the tuner losing.
std::vector<double> time_solutions(const GemmKey& key, const Buffers& buf, const std::vector<Solution>& solutions,
                                   StreamRef stream, Issue issue) {
  std::vector<Solution> distinct;
  std::vector<std::size_t> index_of;
  for (const Solution& s : solutions) {
    const auto it = std::find(distinct.begin(), distinct.end(), s);
    index_of.push_back(static_cast<std::size_t>(it - distinct.begin()));
    if (it == distinct.end()) distinct.push_back(s);
  }
  const std::vector<double> timed = time_distinct_solutions(key, buf, distinct, stream, issue);
  std::vector<double> out;
  for (const std::size_t i : index_of) out.push_back(timed[i]);
  return out;
}

// Copy bandwidth (read + write) of 1 GiB device to device, bytes per second.
double measured_copy_bandwidth(StreamRef stream) {
  const std::size_t bytes = std::size_t{1} << 30;
  void* src = memory::allocate(bytes, stream);
  void* dst = memory::allocate(bytes, stream);
  Event start(EventFlags{.enable_timing = true}), stop(EventFlags{.enable_timing = true});
  std::vector<double> rates;
  for (int i = 0; i < 6; ++i) {
    start.record(stream);
    CUDAKIT_CHECK_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream.handle()));
    stop.record(stream);
    stop.synchronize();
    if (i > 0) rates.push_back(2.0 * bytes / (start.elapsed_time(stop) * 1e-3));
  }
  memory::deallocate(src);
  memory::deallocate(dst);
  return bench::median(rates);
}

// Note [A warm GPU before the first shape]
// An H200 that has been idle runs its first GEMMs at a boost clock that sustained work does not
// keep: a process's first timing of 4096^3 bfloat16 read about a tenth above the warm figure,
// and torch's bench, which timed its first shape straight after start-up, read ahead of cudakit's
// by that much on it (notes/tunable.md). So both benches first run bfloat16 4096^3 GEMMs back to back
// for a second (bench/torch_tunable_bench.py, warm_up_gpu, does the same), and every shape is
// timed in the state sustained work runs in.
void warm_up_gpu(StreamRef stream) {
  constexpr int n = 4096;
  const std::size_t elements = std::size_t{n} * n;
  void* a = memory::allocate(elements * 2, stream);
  void* b = memory::allocate(elements * 2, stream);
  void* c = memory::allocate(elements * 2, stream);
  tunable::detail::fill_random(a, GemmDType::bfloat16, elements, 1, stream);
  tunable::detail::fill_random(b, GemmDType::bfloat16, elements, 2, stream);
  cublasHandle_t h = tensor::detail::cublas_handle(stream);
  const float alpha = 1, beta = 0;
  const auto start = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - start < std::chrono::seconds(1)) {
    for (int i = 0; i < 20; ++i) {
      tensor::detail::check_cublas(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, a, CUDA_R_16BF, n, b,
                                                CUDA_R_16BF, n, &beta, c, CUDA_R_16BF, n, CUBLAS_COMPUTE_32F,
                                                CUBLAS_GEMM_DEFAULT),
                                   "cublasGemmEx");
    }
    stream.synchronize();
  }
  memory::deallocate(a);
  memory::deallocate(b);
  memory::deallocate(c);
}

// Host time of one call: tunable::gemm on a tuned key against cublasGemmEx, 2000 calls each of a
// 64 x 64 x 64 float16 GEMM (their kernels are shorter than the host's work, so the queue never
// fills), microseconds per call.
std::pair<double, double> host_cost_us(StreamRef stream) {
  GemmKey key;
  key.m = key.n = key.k = key.lda = key.ldb = key.ldc = 64;
  key.a_type = key.b_type = key.c_type = GemmDType::float16;
  Buffers buf;
  make_buffers(buf, key, stream);
  GemmArgs g = args_of(key, buf, 0);
  gemm(g, stream);  // tuned here
  stream.synchronize();
  const float one = 1, zero = 0;
  const auto plain = [&] {
    cublasHandle_t h = tensor::detail::cublas_handle(stream);
    tensor::detail::check_cublas(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 64, 64, 64, &one, g.a, CUDA_R_16F, 64, g.b,
                                              CUDA_R_16F, 64, &zero, g.c, CUDA_R_16F, 64, CUBLAS_COMPUTE_32F,
                                              CUBLAS_GEMM_DEFAULT),
                                 "cublasGemmEx");
  };
  std::vector<double> tuned_us, plain_us;
  for (int round = 0; round < 5; ++round) {
    tuned_us.push_back(bench::elapsed_us([&] {
                         for (int i = 0; i < 2000; ++i) gemm(g, stream);
                       }) / 2000);
    stream.synchronize();
    plain_us.push_back(bench::elapsed_us([&] {
                         for (int i = 0; i < 2000; ++i) plain();
                       }) / 2000);
    stream.synchronize();
  }
  return {bench::median(tuned_us), bench::median(plain_us)};
}

}  // namespace

int main(int argc, char** argv) {
  std::string shapes_path = "bench/tunable_shapes.json", only;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--only" && i + 1 < argc) only = argv[++i];
    else shapes_path = arg;
  }
  if (!is_available()) {
    std::cerr << "tunable_bench: no CUDA device\n";
    return 1;
  }
  std::ifstream in(shapes_path);
  if (!in) {
    std::cerr << "tunable_bench: cannot read " << shapes_path << "\n";
    return 1;
  }
  const nlohmann::json shapes = nlohmann::json::parse(in);
  TuningOptions o = options();
  o.enabled = true;
  o.tuning = true;
  o.filename = "";
  set_options(o);
  Stream stream;
  const DeviceProperties props = get_device_properties();
  const double peak_bandwidth = 2.0 * props.memory_clock_rate_khz * 1e3 * props.memory_bus_width / 8;
  const double copy_bandwidth = measured_copy_bandwidth(stream.ref());
  warm_up_gpu(stream.ref());
  double log_vs_default = 0, log_vs_heuristic = 0, worst_vs_default = 1e9, max_tuning_ms = 0;
  int count = 0;
  for (const nlohmann::json& shape : shapes) {
    const std::string name = shape["name"];
    if (!only.empty() && name.find(only) == std::string::npos) continue;
    GemmArgs probe;
    probe.key = key_of(shape);
    const GemmKey key = complete_key(probe, stream.ref());
    Buffers buf;
    make_buffers(buf, key, stream.ref());
    const TuningReport report = tune(key, stream.ref());
    std::vector<Solution> solutions{Solution::default_solution(), report.first_heuristic, report.chosen};
    const std::vector<double> ms = time_solutions(key, buf, solutions, stream.ref(), Issue::graph);
    const double flops = 2.0 * key.m * key.n * key.k * key.batch;
    const bool decode = std::min(key.m, key.n) <= 16;
    nlohmann::json line{{"bench", "tunable"},
                        {"impl", "cudakit"},
                        {"shape", name},
                        {"dtype", shape["dtype"]},
                        {"M", shape["M"]},
                        {"N", shape["N"]},
                        {"K", shape["K"]},
                        {"batch", shape["batch"]},
                        {"default_ms", ms[0]},
                        {"heuristic_ms", ms[1]},
                        {"tuned_ms", ms[2]},
                        {"default_tflops", flops / ms[0] * 1e-9},
                        {"heuristic_tflops", flops / ms[1] * 1e-9},
                        {"tuned_tflops", flops / ms[2] * 1e-9},
                        {"tuned_solution", report.chosen.name()},
                        {"heuristic_solution", report.first_heuristic.name()},
                        {"candidates", report.candidates.size()},
                        {"dropped", report.dropped.size()},
                        {"rounds", report.decision.rounds},
                        {"tuning_ms", report.tuning_ms}};
    if (decode) {
      // The same calls issued from the host, for comparison (Note [Timing decode GEMMs from a graph]).
      const std::vector<double> host_ms = time_solutions(key, buf, solutions, stream.ref(), Issue::host);
      line["default_ms_host_issued"] = host_ms[0];
      line["tuned_ms_host_issued"] = host_ms[2];
      // The bound: A + B + C read or written once at the peak bandwidth (2 x memory clock x bus
      // width); beside it the same bytes at the measured device-to-device copy bandwidth, the
      // rate a streaming kernel can reach in practice.
      const double bound_ms = buf.bytes_per_call / peak_bandwidth * 1e3;
      const double copy_ms = buf.bytes_per_call / copy_bandwidth * 1e3;
      line["bytes_per_call"] = buf.bytes_per_call;
      line["bound_tflops"] = flops / bound_ms * 1e-9;
      line["tuned_fraction_of_peak_bandwidth"] = bound_ms / ms[2];
      line["tuned_fraction_of_copy_bandwidth"] = copy_ms / ms[2];
      line["default_fraction_of_peak_bandwidth"] = bound_ms / ms[0];
      line["default_fraction_of_copy_bandwidth"] = copy_ms / ms[0];
      line["heuristic_fraction_of_peak_bandwidth"] = bound_ms / ms[1];
      line["heuristic_fraction_of_copy_bandwidth"] = copy_ms / ms[1];
    }
    std::cout << line.dump() << std::endl;
    log_vs_default += std::log(ms[0] / ms[2]);
    log_vs_heuristic += std::log(ms[1] / ms[2]);
    worst_vs_default = std::min(worst_vs_default, ms[0] / ms[2]);
    max_tuning_ms = std::max(max_tuning_ms, report.tuning_ms);
    ++count;
  }
  const auto [tuned_us, plain_us] = host_cost_us(stream.ref());
  nlohmann::json summary{{"bench", "tunable_summary"},
                         {"impl", "cudakit"},
                         {"shapes", count},
                         {"geomean_vs_default", count ? std::exp(log_vs_default / count) : 0},
                         {"geomean_vs_heuristic", count ? std::exp(log_vs_heuristic / count) : 0},
                         {"worst_vs_default", worst_vs_default},
                         {"max_tuning_ms", max_tuning_ms},
                         {"peak_bandwidth_tb_s", peak_bandwidth * 1e-12},
                         {"copy_bandwidth_tb_s", copy_bandwidth * 1e-12},
                         {"tuned_call_host_us", tuned_us},
                         {"cublas_call_host_us", plain_us}};
  std::cout << summary.dump() << std::endl;
  return 0;
}
