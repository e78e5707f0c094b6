// Allocator workloads (bench/support/alloc_workloads.hpp) against cudaMallocAsync and cudaMalloc
// here, and cudakit's caching allocator; PyTorch's runs the same workloads in
// bench/torch/torch_alloc_bench.cpp, and bench/alloc_table.py joins them into one table.
// Usage: alloc_bench [--only NAME] [--interleaved N] [trace-label trace-path]...   NAME: cudakit,
// cudakit_async (cudakit's cudaMallocAsync backend, only alone), cudaMallocAsync, cudaMalloc.
// --interleaved N: also cudakit and cudaMallocAsync replaying each trace in turn, N times each
// (Note [Trace replays interleaved] in support/alloc_workloads.hpp).

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cudakit/core/device.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/core/stream.hpp"
#include "support/alloc_allocators.hpp"
#include "support/alloc_workloads.hpp"

int main(int argc, char** argv) {
  if (!cudakit::is_available()) {
    std::printf("no CUDA device: allocator benchmark skipped\n");
    return 0;
  }
  std::string only;
  int interleaved_reps = 0;
  std::vector<std::pair<std::string, std::string>> traces;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
      only = argv[++i];
    } else if (std::strcmp(argv[i], "--interleaved") == 0 && i + 1 < argc) {
      interleaved_reps = std::atoi(argv[++i]);
    } else if (i + 1 < argc) {
      traces.emplace_back(argv[i], argv[i + 1]);
      ++i;
    }
  }
  cudakit::set_device(0);
  // cudakit::Stream, as a program using cudakit makes them: the allocator then knows the streams
  // exist (See Note [Memory across streams]). Kept until the end, as the workloads' memory is.
  std::vector<cudakit::Stream> owned;
  owned.reserve(64);
  auto make_stream = [&owned] {
    owned.emplace_back(0);
    return owned.back().handle();
  };
  using namespace cudakit::bench;
  if (only.empty() || only == "cudakit") {
    CudakitAllocator a;
    run_all_workloads("cudakit", a, make_stream, traces);
  }
  // cudakit's cudaMallocAsync backend through the same public API. The backend is chosen once
  // per process, at the first allocation, so it runs only alone (--only cudakit_async).
  if (only == "cudakit_async") {
    const char* conf = std::getenv("CUDAKIT_ALLOC_CONF");
    const std::string with_backend = std::string(conf && *conf ? conf : "") + (conf && *conf ? "," : "") +
                                     "backend:cudaMallocAsync";
    setenv("CUDAKIT_ALLOC_CONF", with_backend.c_str(), 1);
    if (cudakit::memory::get_allocator_backend() != "cudaMallocAsync") {
      std::fprintf(stderr, "cudakit_async: the backend is %s, not cudaMallocAsync\n",
                   cudakit::memory::get_allocator_backend().c_str());
      return 1;
    }
    CudakitAllocator a;
    run_all_workloads("cudakit_async", a, make_stream, traces);
  }
  if (only.empty() || only == "cudaMallocAsync") {
    MallocAsyncAllocator a;
    run_all_workloads("cudaMallocAsync", a, make_stream, traces);
  }
  if (interleaved_reps > 0) {
    CudakitAllocator a;
    MallocAsyncAllocator b;
    emit_interleaved_replays("cudakit", a, "cudaMallocAsync", b, make_stream, traces, interleaved_reps);
  }
  if (only.empty() || only == "cudaMalloc") {
    MallocAllocator a;
    cudaStream_t s = make_stream();
    for (auto [label, bytes] : {std::pair<const char*, std::size_t>{"pair_512B", 512},
                                {"pair_1MiB", 1u << 20}, {"pair_64MiB", 64u << 20}}) {
      emit("cudaMalloc", label, pair_ns(a, bytes, s, 2000), "ns");
    }
  }
  return 0;
}
