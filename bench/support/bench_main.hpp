#pragma once
// main() for GPU benchmarks: says plainly and exits 0 where there is no GPU.

#include <benchmark/benchmark.h>

#include <cstdio>

#include "cudakit/core/device.hpp"

#define CUDAKIT_BENCHMARK_MAIN()                                                      \
  int main(int argc, char** argv) {                                                   \
    if (!::cudakit::is_available()) {                                                 \
      std::printf("no CUDA device: GPU benchmarks skipped\n");                        \
      return 0;                                                                       \
    }                                                                                 \
    ::benchmark::Initialize(&argc, argv);                                             \
    if (::benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;               \
    ::benchmark::RunSpecifiedBenchmarks();                                            \
    ::benchmark::Shutdown();                                                          \
    return 0;                                                                         \
  }
