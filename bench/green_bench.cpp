// green_bench: green contexts on an SM-bound kernel (a bf16 GEMM, 8192^3 by default, through
// cudakit's cuBLAS matmul). One JSON line per measurement:
//   - the GEMM on the whole device, then on 16-, 32- and 64-SM contexts, against the bound
//     1.1 x (device SMs / N) x whole-device time;
//   - two halves of a split, each alone, then both at once (each should stay within 10%);
//   - a decode-style loop (small GEMMs, latency per step, p50/p99) alone and while a
//     prefill-style load (big GEMMs) runs: in two green partitions, and on two plain streams.
//
//   green_bench [--n 8192] [--reps 10]
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cudakit/core/device.hpp"
#include "cudakit/core/green_context.hpp"
#include "cudakit/core/stream.hpp"
#include "cudakit/tensor/factories.hpp"
#include "cudakit/tensor/matmul.hpp"

namespace {

namespace tensor = cudakit::tensor;
using cudakit::GreenContext;
using cudakit::StreamRef;

void emit(nlohmann::json line) {
  line["bench"] = "green";
  std::printf("%s\n", line.dump().c_str());
  std::fflush(stdout);
}

struct Gemm {
  tensor::Tensor a, b;
  Gemm(std::int64_t m, std::int64_t n, std::int64_t k, StreamRef stream) {
    const tensor::TensorOptions bf16{.dtype = tensor::DType::bfloat16, .device = tensor::Device::cuda(0)};
    a = tensor::ones({m, k}, bf16, stream);
    b = tensor::ones({k, n}, bf16, stream);
  }
  void run(StreamRef stream) const { (void)tensor::matmul(a, b, stream); }
};

// The milliseconds of each of `steps` runs of `gemm` on `stream` (after a warm-up), sorted;
// before_step(i) queues whatever should run beside step i.
template <class BeforeStep>
std::vector<float> step_times(const Gemm& gemm, StreamRef stream, int steps, BeforeStep before_step) {
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  gemm.run(stream);
  cudaDeviceSynchronize();
  std::vector<float> times;
  for (int i = 0; i < steps; ++i) {
    before_step(i);
    cudaEventRecord(start, stream.handle());
    gemm.run(stream);
    cudaEventRecord(stop, stream.handle());
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    times.push_back(ms);
  }
  cudaDeviceSynchronize();
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(times.begin(), times.end());
  return times;
}

// Median milliseconds of one GEMM on `stream`.
double gemm_ms(const Gemm& gemm, StreamRef stream, int reps) {
  const std::vector<float> times = step_times(gemm, stream, reps, [](int) {});
  return times[times.size() / 2];
}

// Both streams run `reps` GEMMs at once; each one's mean milliseconds per GEMM.
std::pair<double, double> concurrent_ms(const Gemm& x, StreamRef sx, const Gemm& y, StreamRef sy, int reps) {
  cudaEvent_t events[4];
  for (auto& e : events) cudaEventCreate(&e);
  x.run(sx);
  y.run(sy);
  cudaDeviceSynchronize();
  cudaEventRecord(events[0], sx.handle());
  cudaEventRecord(events[2], sy.handle());
  for (int i = 0; i < reps; ++i) {
    x.run(sx);
    y.run(sy);
  }
  cudaEventRecord(events[1], sx.handle());
  cudaEventRecord(events[3], sy.handle());
  cudaDeviceSynchronize();
  float a = 0, b = 0;
  cudaEventElapsedTime(&a, events[0], events[1]);
  cudaEventElapsedTime(&b, events[2], events[3]);
  for (auto& e : events) cudaEventDestroy(e);
  return {a / reps, b / reps};
}

// Latency of each of `steps` decode steps on `decode_stream`, while `prefill` (if any) keeps
// `prefill_stream` busy; returns {p50, p99} in milliseconds.
std::pair<double, double> decode_latency(const Gemm& decode, StreamRef decode_stream, const Gemm* prefill,
                                         StreamRef prefill_stream, int steps) {
  const std::vector<float> times = step_times(decode, decode_stream, steps, [&](int i) {
    if (prefill != nullptr && i % 4 == 0) prefill->run(prefill_stream);  // keeps it queued
  });
  return {times[times.size() / 2], times[std::min(times.size() - 1, times.size() * 99 / 100)]};
}

}  // namespace

int main(int argc, char** argv) {
  std::int64_t n = 8192;
  int reps = 10;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string arg = argv[i];
    if (arg == "--n") n = std::atoll(argv[i + 1]);
    else if (arg == "--reps") reps = std::atoi(argv[i + 1]);
  }
  if (!cudakit::is_available()) {
    std::printf("no CUDA device: GPU benchmarks skipped\n");
    return 0;
  }
  const cudakit::SmResourceInfo device = GreenContext::device_resource(0);
  emit({{"case", "device"}, {"sms", device.sm_count}, {"min_partition", device.min_partition},
        {"alignment", device.alignment}});
  cudakit::Stream plain(0);
  const Gemm big(n, n, n, plain.ref());
  const double whole = gemm_ms(big, plain.ref(), reps);
  emit({{"case", "gemm"}, {"impl", "cudakit"}, {"sms", device.sm_count}, {"ms", whole}});
  for (unsigned sms : {64u, 32u, 16u}) {
    GreenContext context = GreenContext::create(sms, 0);
    const double ms = gemm_ms(big, context.stream(), reps);
    const double bound = 1.1 * device.sm_count / context.sm_count() * whole;
    emit({{"case", "gemm"}, {"impl", "cudakit"}, {"sms", context.sm_count()}, {"requested", sms}, {"ms", ms},
          {"bound_ms", bound}, {"within_bound", ms <= bound}});
  }
  {
    const unsigned half = cudakit::granted_sm_count(device, device.sm_count / 2 / device.alignment * device.alignment);
    const std::vector<unsigned> counts{half, half};
    std::vector<GreenContext> parts = GreenContext::split(0, counts);
    const double alone0 = gemm_ms(big, parts[0].stream(), reps);
    const double alone1 = gemm_ms(big, parts[1].stream(), reps);
    const auto [together0, together1] = concurrent_ms(big, parts[0].stream(), big, parts[1].stream(), reps);
    emit({{"case", "two_partitions"}, {"impl", "cudakit"}, {"sms", {parts[0].sm_count(), parts[1].sm_count()}},
          {"alone_ms", {alone0, alone1}}, {"together_ms", {together0, together1}},
          {"slowdown", {together0 / alone0, together1 / alone1}},
          {"within_10pct", together0 <= 1.1 * alone0 && together1 <= 1.1 * alone1}});
  }
  {
    const unsigned decode_sms = cudakit::granted_sm_count(device, 16);
    const unsigned prefill_sms = (device.sm_count - decode_sms) / device.alignment * device.alignment;
    const std::vector<unsigned> counts{decode_sms, prefill_sms};
    std::vector<GreenContext> parts = GreenContext::split(0, counts);
    const Gemm decode(16, n, n, plain.ref());
    const int steps = 400;
    const auto [alone50, alone99] = decode_latency(decode, parts[0].stream(), nullptr, parts[1].stream(), steps);
    const auto [busy50, busy99] = decode_latency(decode, parts[0].stream(), &big, parts[1].stream(), steps);
    emit({{"case", "decode_latency"}, {"impl", "cudakit_green"}, {"sms", {parts[0].sm_count(), parts[1].sm_count()}},
          {"alone_p50_ms", alone50}, {"alone_p99_ms", alone99}, {"with_prefill_p50_ms", busy50},
          {"with_prefill_p99_ms", busy99}});
    cudakit::Stream decode_stream(0, -1), prefill_stream(0);
    const auto [plain50, plain99] = decode_latency(decode, decode_stream.ref(), nullptr, prefill_stream.ref(), steps);
    const auto [shared50, shared99] = decode_latency(decode, decode_stream.ref(), &big, prefill_stream.ref(), steps);
    emit({{"case", "decode_latency"}, {"impl", "plain_streams"}, {"sms", device.sm_count},
          {"alone_p50_ms", plain50}, {"alone_p99_ms", plain99}, {"with_prefill_p50_ms", shared50},
          {"with_prefill_p99_ms", shared99}});
  }
  return 0;
}
