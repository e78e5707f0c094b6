// Trace export speed on synthetic events (no GPU needed): the target is 100,000 kernel events
// exported in under 1 s. Compared with building the same trace as an nlohmann::json DOM and
// dumping it, which is why export writes text by hand.

#include <benchmark/benchmark.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <unistd.h>

#include "cudakit/profiler/chrome_trace.hpp"
#include "profiler/detail/synthetic_events.hpp"

namespace {

using cudakit::graphs::KernelAnnotations;
using cudakit::profiler::TraceEvents;

const TraceEvents& events_of(std::size_t kernels) {
  static std::map<std::size_t, TraceEvents> cache;
  auto it = cache.find(kernels);
  if (it == cache.end())
    it = cache.emplace(kernels, cudakit::profiler::detail::synthetic_events(kernels)).first;
  return it->second;
}

// Every kernel of the first launch annotated, as a graph with annotations would be.
const KernelAnnotations& annotations() {
  static const KernelAnnotations value = [] {
    KernelAnnotations a;
    for (std::uint32_t node = 1; node <= 1000; ++node) {
      a[cudakit::profiler::detail::synthetic_node_id(1, node)] = {
          {{"name", std::string(node % 2 ? "attention" : "mlp")}, {"layer", std::int64_t{3}}}};
    }
    return a;
  }();
  return value;
}

void BM_ExportChromeTraceToFile(benchmark::State& state) {
  const TraceEvents& events = events_of(static_cast<std::size_t>(state.range(0)));
  const auto path = std::filesystem::temp_directory_path() /
                    ("cudakit_profiler_bench_" + std::to_string(::getpid()) + ".json");
  for (auto _ : state) {
    cudakit::profiler::write_chrome_trace(path.string(), events,
                                          state.range(1) != 0 ? &annotations() : nullptr);
  }
  state.counters["bytes"] = static_cast<double>(std::filesystem::file_size(path));
  state.counters["events/s"] = benchmark::Counter(static_cast<double>(events.kernels.size()),
                                                  benchmark::Counter::kIsIterationInvariantRate);
  std::filesystem::remove(path);
}
BENCHMARK(BM_ExportChromeTraceToFile)
    ->ArgsProduct({{10'000, 100'000}, {0, 1}})
    ->ArgNames({"kernels", "annotated"})
    ->Unit(benchmark::kMillisecond);

// The same kernel events through a DOM, for comparison (not written to disk).
void BM_ExportKernelsViaJsonDom(benchmark::State& state) {
  const TraceEvents& events = events_of(static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) {
    nlohmann::json trace = {{"displayTimeUnit", "ms"}, {"traceEvents", nlohmann::json::array()}};
    auto& list = trace["traceEvents"];
    for (const auto& k : events.kernels) {
      list.push_back({{"ph", "X"}, {"cat", "kernel"}, {"name", k.name}, {"pid", k.device},
                      {"tid", k.stream}, {"ts", k.start_ns / 1e3}, {"dur", (k.end_ns - k.start_ns) / 1e3},
                      {"args", {{"device", k.device}, {"stream", k.stream},
                                {"correlation", k.correlation},
                                {"registers per thread", k.registers_per_thread},
                                {"shared memory", k.static_shared_memory + k.dynamic_shared_memory},
                                {"grid", {k.grid[0], k.grid[1], k.grid[2]}},
                                {"block", {k.block[0], k.block[1], k.block[2]}},
                                {"graph id", k.graph_id}, {"graph node id", k.graph_node_id}}}});
    }
    benchmark::DoNotOptimize(trace.dump());
  }
}
BENCHMARK(BM_ExportKernelsViaJsonDom)->Arg(100'000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
