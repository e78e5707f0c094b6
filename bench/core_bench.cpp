// Core runtime overheads, each beside the raw CUDA runtime call doing the same: the same flags
// (a cudakit Event has timing off unless asked, a raw cudaEventCreate has it on) and the same
// loop. scripts/device-bench.sh runs the pairs interleaved in random order, repeated, and the
// report takes each one's median (Note [Interleaved repetitions] there).

#include <benchmark/benchmark.h>

#include "cudakit/core/current_stream.hpp"
#include "cudakit/core/device.hpp"
#include "cudakit/core/event.hpp"
#include "cudakit/core/stream.hpp"
#include "cudakit/core/trace_hooks.hpp"
#include "support/bench_kernels.hpp"
#include "support/bench_main.hpp"

namespace {

void BM_StreamCreateDestroy_cudakit(benchmark::State& state) {
  for (auto _ : state) {
    cudakit::Stream s;
    benchmark::DoNotOptimize(s.handle());
  }
}
BENCHMARK(BM_StreamCreateDestroy_cudakit);

void BM_StreamCreateDestroy_raw(benchmark::State& state) {
  for (auto _ : state) {
    cudaStream_t s;
    cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, 0);
    benchmark::DoNotOptimize(s);
    cudaStreamDestroy(s);
  }
}
BENCHMARK(BM_StreamCreateDestroy_raw);

void BM_EventRecordQuery_cudakit(benchmark::State& state) {
  cudakit::Stream s;
  cudakit::Event e;
  for (auto _ : state) {
    e.record(s);
    benchmark::DoNotOptimize(e.query());
  }
}
BENCHMARK(BM_EventRecordQuery_cudakit);

void BM_EventRecordQuery_raw(benchmark::State& state) {
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  cudaEvent_t e;
  cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
  for (auto _ : state) {
    cudaEventRecord(e, s);
    // Not ready is left in the runtime's last-error slot, where the next launch check would take
    // it for a failure: a careful caller clears it, as torch's Event.query does and cudakit's.
    const cudaError_t status = cudaEventQuery(e);
    if (status == cudaErrorNotReady) (void)cudaGetLastError();
    benchmark::DoNotOptimize(status);
  }
  cudaEventDestroy(e);
  cudaStreamDestroy(s);
}
BENCHMARK(BM_EventRecordQuery_raw);

// A timed pair around an empty stretch of stream, then elapsed_time: the cost of timing a region.
void BM_EventTiming_cudakit(benchmark::State& state) {
  cudakit::Stream s;
  cudakit::Event a(cudakit::EventFlags{.enable_timing = true});
  cudakit::Event b(cudakit::EventFlags{.enable_timing = true});
  for (auto _ : state) {
    a.record(s);
    b.record(s);
    b.synchronize();
    benchmark::DoNotOptimize(a.elapsed_time(b));
  }
}
BENCHMARK(BM_EventTiming_cudakit);

void BM_EventTiming_raw(benchmark::State& state) {
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  for (auto _ : state) {
    cudaEventRecord(a, s);
    cudaEventRecord(b, s);
    cudaEventSynchronize(b);
    float ms;
    cudaEventElapsedTime(&ms, a, b);
    benchmark::DoNotOptimize(ms);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  cudaStreamDestroy(s);
}
BENCHMARK(BM_EventTiming_raw);

// Note [One stream for both sides of a launch row]
// The launch rows ran each variant on a stream created for it. On 2026-12-05 cudakit's
// current-stream loop was bimodal from one repetition to the next while the raw loop beside it
// held steady (notes/performance-rows.md), and the two loops differ only by a thread-local read.
// Which hardware queue a new stream lands on is the driver's choice, so the stream itself is a
// variable between the two sides. The launch loops therefore share one stream,
// made once, so that a row compares the code around the launch and nothing else.
cudaStream_t launch_stream() {
  static const cudaStream_t stream = [] {
    cudaStream_t s = nullptr;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    return s;
  }();
  return stream;
}

// Host-side cost of launching an empty kernel on the current stream (queue kept from filling
// by a sync every 256 launches), through cudakit's current-stream lookup vs a raw handle.
void BM_EmptyKernelLaunch_cudakit_current_stream(benchmark::State& state) {
  const cudakit::StreamRef s(launch_stream(), cudakit::current_device());
  cudakit::set_current_stream(s);
  int n = 0;
  for (auto _ : state) {
    cudakit::bench::launch_empty(cudakit::current_stream().handle());
    if (++n % 256 == 0) s.synchronize();
  }
  s.synchronize();
  cudakit::set_current_stream(cudakit::default_stream());
}
BENCHMARK(BM_EmptyKernelLaunch_cudakit_current_stream);

// `launch(stream)` on the launch rows' shared stream, the queue kept from filling by a sync every 256.
template <class Launch>
void launch_loop(benchmark::State& state, Launch launch) {
  const cudaStream_t s = launch_stream();
  int n = 0;
  for (auto _ : state) {
    launch(s);
    if (++n % 256 == 0) cudaStreamSynchronize(s);
  }
  cudaStreamSynchronize(s);
}

void BM_EmptyKernelLaunch_raw(benchmark::State& state) { launch_loop(state, cudakit::bench::launch_empty); }
BENCHMARK(BM_EmptyKernelLaunch_raw);

// The library's own launch path (cudakit::launch_kernel: the trace hooks' check and the launch
// check) against a raw launch checked the same way (torch's C10_CUDA_KERNEL_LAUNCH_CHECK is that
// cudaGetLastError too); and with a listener attached, what listening costs.
void BM_LaunchKernel_cudakit(benchmark::State& state) {
  launch_loop(state, cudakit::bench::launch_empty_through_cudakit);
}
BENCHMARK(BM_LaunchKernel_cudakit);

void BM_LaunchKernel_raw(benchmark::State& state) {
  launch_loop(state, [](cudaStream_t s) {
    cudakit::bench::launch_empty(s);
    benchmark::DoNotOptimize(cudaGetLastError());
  });
}
BENCHMARK(BM_LaunchKernel_raw);

void BM_LaunchKernel_listened(benchmark::State& state) {
  long seen = 0;
  const auto id = cudakit::attach_trace_listener([&](const cudakit::TraceEvent&) { ++seen; });
  launch_loop(state, cudakit::bench::launch_empty_through_cudakit);
  cudakit::detach_trace_listener(id);
  benchmark::DoNotOptimize(seen);
}
BENCHMARK(BM_LaunchKernel_listened);

// Asking whether an idle stream has work left: the caching allocator's look at a stream whose
// frees another stream wants (CudaStreamEvents::idle, Note [Memory across streams]) is this
// call; how often the trace replays make it: notes/allocator.md (probe/event_costs.cpp).
void BM_StreamQueryIdle_cudakit(benchmark::State& state) {
  const cudakit::StreamRef s(launch_stream(), cudakit::current_device());
  s.synchronize();
  for (auto _ : state) benchmark::DoNotOptimize(s.query());
}
BENCHMARK(BM_StreamQueryIdle_cudakit);

void BM_StreamQueryIdle_raw(benchmark::State& state) {
  const cudaStream_t s = launch_stream();
  cudaStreamSynchronize(s);
  for (auto _ : state) benchmark::DoNotOptimize(cudaStreamQuery(s));
}
BENCHMARK(BM_StreamQueryIdle_raw);

// Launch + wait for one empty kernel: the round-trip latency.
void BM_EmptyKernelRoundTrip_cudakit(benchmark::State& state) {
  cudakit::Stream s;
  for (auto _ : state) {
    cudakit::bench::launch_empty(s.handle());
    s.synchronize();
  }
}
BENCHMARK(BM_EmptyKernelRoundTrip_cudakit);

void BM_EmptyKernelRoundTrip_raw(benchmark::State& state) {
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  for (auto _ : state) {
    cudakit::bench::launch_empty(s);
    cudaStreamSynchronize(s);
  }
  cudaStreamDestroy(s);
}
BENCHMARK(BM_EmptyKernelRoundTrip_raw);

}  // namespace

CUDAKIT_BENCHMARK_MAIN();
