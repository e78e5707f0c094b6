// The stream sanitizer's cost. Targets: at most 2 us per tracked launch, at most 1.5x the
// unsanitized wall time of a 1000-op eager loop (and of the seed workflow, `cudakit demo`, timed
// by bench/seed_workflow_time.py). Peer: torch.cuda._sanitizer (bench/torch_sanitizer_bench.py;
// measured 137.5 us per op against 6.9 off on the H200 machine).
// Prints JSON lines {"bench":"sanitizer","case":...,"impl":...,"us_per_op":...} and a table.
//  - stack capture: capture_return_addresses 24 frames deep, frame pointers and the unwinder;
//  - detector: Detector::on_event for a launch with three accesses, host only (no GPU needed),
//    without stacks, with them (frame pointers, the default) and with the unwinder's;
//  - launch: cudakit::launch of a small kernel with two declared accesses, issue + completion;
//  - eager loop: 1000 tensor ops (x = x + 1, each an allocation, a launch and a free).

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "cudakit/core/device.hpp"
#include "cudakit/core/launch.cuh"
#include "cudakit/core/stack_trace.hpp"
#include "cudakit/core/stream.hpp"
#include "cudakit/memory/device_allocator.hpp"
#include "cudakit/sanitizer/detector.hpp"
#include "cudakit/sanitizer/sanitizer.hpp"
#include "cudakit/tensor/elementwise.hpp"
#include "cudakit/tensor/factories.hpp"
#include "support/timing.hpp"

namespace {

namespace san = cudakit::sanitizer;
namespace ten = cudakit::tensor;

struct Row {
  std::string name;
  std::string impl;
  double us;
};
std::vector<Row> g_rows;

void row(std::string name, std::string impl, double us) {
  std::printf("{\"bench\":\"sanitizer\",\"case\":\"%s\",\"impl\":\"%s\",\"us_per_op\":%.3f}\n", name.c_str(),
              impl.c_str(), us);
  std::fflush(stdout);
  g_rows.push_back({std::move(name), std::move(impl), us});
}

const char* impl_name(san::StackCapture stacks) {
  switch (stacks) {
    case san::StackCapture::off: return "cudakit, no stacks";
    case san::StackCapture::frame_pointers: return "cudakit, stacks";
    case san::StackCapture::unwinder: return "cudakit, unwinder stacks";
  }
  return "?";
}

void detector_only(san::StackCapture stacks) {
  constexpr int kOps = 200'000;
  std::vector<char> memory(3 << 20);
  const cudakit::MemoryAccess accesses[] = {
      {memory.data(), 1 << 20, cudakit::MemoryAccess::Mode::read, "a"},
      {memory.data() + (1 << 20), 1 << 20, cudakit::MemoryAccess::Mode::read, "b"},
      {memory.data() + (2 << 20), 1 << 20, cudakit::MemoryAccess::Mode::write, "out"}};
  const auto stream = reinterpret_cast<cudaStream_t>(std::uintptr_t{0x100});
  const cudakit::TraceEvent launch{.kind = cudakit::TraceEventKind::kernel_launch, .device = 0, .stream = stream,
                                   .name = "bench", .accesses = accesses, .accesses_declared = true};
  const double us = cudakit::bench::median_us(5, [&] {
    san::Detector d({.stacks = stacks});
    for (int i = 0; i < kOps; ++i) (void)d.on_event(launch);
  });
  row("Detector::on_event, 3 accesses", impl_name(stacks), us / kOps);
}

// capture_return_addresses alone, `depth` frames below this one (a tensor op called from a
// program's code is about 20 deep with the hooks' and the sanitizer's frames).
template <int Depth>
[[gnu::noinline]] double capture_at_depth(cudakit::StackWalk walk) {
  if constexpr (Depth > 0) {
    const double us = capture_at_depth<Depth - 1>(walk);
    asm volatile("" ::: "memory");  // not a tail call: each frame stays
    return us;
  } else {
    constexpr int kCaptures = 200'000;
    void* frames[24];
    return cudakit::bench::median_us(5, [&] {
             for (int i = 0; i < kCaptures; ++i) {
               (void)cudakit::capture_return_addresses(frames, 0, walk);
               asm volatile("" : : "r"(frames) : "memory");
             }
           }) /
           kCaptures;
  }
}

void capture_only(cudakit::StackWalk walk) {
  row("stack capture, 24 frames", walk == cudakit::StackWalk::unwinder ? "unwinder" : "frame pointers",
      capture_at_depth<24>(walk));
}

__global__ void touch(const float* x, float* y, int n) {
  if (blockIdx.x == 0 && threadIdx.x == 0 && n > 0) y[0] = x[0] + 1.0f;
}

void launches(const char* impl, bool sanitize, san::StackCapture stacks) {
  constexpr int kLaunches = 20'000;
  constexpr int kN = 1 << 16;
  cudakit::Stream s;
  auto* x = static_cast<float*>(cudakit::memory::allocate(kN * sizeof(float), s));
  auto* y = static_cast<float*>(cudakit::memory::allocate(kN * sizeof(float), s));
  CUDAKIT_CHECK_CUDA(cudaMemsetAsync(x, 0, kN * sizeof(float), s.handle()));
  s.synchronize();
  if (sanitize) san::enable(san::Mode::throw_error, {.stacks = stacks, .uninitialized_reads = false});
  const auto issue = [&] {
    for (int i = 0; i < kLaunches; ++i) {
      cudakit::launch(touch, 1, 32, s,
                      {"touch", {cudakit::reads(x, kN * sizeof(float), "x"), cudakit::writes(y, kN * sizeof(float), "y")}},
                      x, y, kN);
    }
    s.synchronize();
  };
  issue();  // warm-up
  const double us = cudakit::bench::median_us(5, issue);
  if (sanitize) san::disable();
  row("launch + completion", impl, us / kLaunches);
  cudakit::memory::deallocate(x);
  cudakit::memory::deallocate(y);
}

void eager_loop(const char* impl, bool sanitize, san::StackCapture stacks) {
  constexpr int kOps = 1000;
  const ten::TensorOptions on_gpu{ten::DType::float32, ten::Device{ten::Device::Type::cuda, 0}};
  if (sanitize) san::enable(san::Mode::throw_error, {.stacks = stacks});
  const auto loop = [&] {
    ten::Tensor x = ten::zeros({1 << 16}, on_gpu);
    for (int i = 0; i < kOps; ++i) x = ten::add(x, 1.0);
    cudakit::synchronize();
  };
  loop();  // warm-up (the allocator's cache, the module)
  const double us = cudakit::bench::median_us(7, loop);
  if (sanitize) san::disable();
  row("eager loop, 1000 x (x = x + 1)", impl, us / kOps);
}

double value(const std::string& name, const std::string& impl) {
  for (const Row& r : g_rows) {
    if (r.name == name && r.impl == impl) return r.us;
  }
  return 0;
}

}  // namespace

int main() {
  capture_only(cudakit::StackWalk::frame_pointers);
  capture_only(cudakit::StackWalk::unwinder);
  for (const auto stacks : {san::StackCapture::off, san::StackCapture::frame_pointers, san::StackCapture::unwinder}) {
    detector_only(stacks);
  }
  if (!cudakit::is_available()) {
    std::printf("no CUDA device: the GPU cases are skipped\n");
    return 0;
  }
  using enum san::StackCapture;
  for (const auto& [on, stacks] : {std::pair{false, off}, std::pair{true, off}, std::pair{true, frame_pointers},
                                   std::pair{true, unwinder}}) {
    const char* impl = on ? impl_name(stacks) : "off";
    launches(impl, on, stacks);
    eager_loop(impl, on, stacks);
  }
  std::printf("\n%-34s %-26s %10s %8s\n", "case", "sanitizer", "us/op", "x off");
  for (const Row& r : g_rows) {
    const double off = value(r.name, "off");
    std::printf("%-34s %-26s %10.3f %8s\n", r.name.c_str(), r.impl.c_str(), r.us,
                off > 0 ? (std::to_string(r.us / off).substr(0, 5) + "x").c_str() : "-");
  }
  for (const char* impl : {"cudakit, no stacks", "cudakit, stacks", "cudakit, unwinder stacks"}) {
    std::printf("%s: %.3f us added per tracked launch (target <= 2)\n", impl,
                value("launch + completion", impl) - value("launch + completion", "off"));
  }
  return 0;
}
