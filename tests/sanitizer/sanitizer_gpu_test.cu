// The stream sanitizer on real programs: tensor ops and users' kernels (cudakit::launch with
// declared accesses) on several streams, a subset of the host tier's planted bugs (each must be
// reported) and correct programs (none may be). Log mode, so a bug's program runs to the end.

#include <gtest/gtest.h>

#include <string>

#include "cudakit/core/event.hpp"
#include "cudakit/core/launch.cuh"
#include "cudakit/core/stream.hpp"
#include "cudakit/graphs/graph.hpp"
#include "cudakit/graphs/graph_capture.hpp"
#include "cudakit/jiterator/jit_function.hpp"
#include "cudakit/memory/device_allocator.hpp"
#include "cudakit/sanitizer/sanitizer.hpp"
#include "cudakit/sanitizer/sanitizer_error.hpp"
#include "cudakit/tensor/elementwise.hpp"
#include "cudakit/tensor/factories.hpp"
#include "cudakit/tensor/matmul.hpp"
#include "cudakit/tunable/gemm.hpp"
#include "cudakit/tunable/tunable.hpp"
#include "support/gpu_test.hpp"

namespace {

namespace ten = cudakit::tensor;
namespace san = cudakit::sanitizer;
using san::HazardKind;

constexpr int kN = 1 << 16;
constexpr std::size_t kBytes = kN * sizeof(float);

__global__ void produce(float* out, int n, float value) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) out[i] = value;
}
__global__ void consume(const float* in, float* out, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) out[i] = in[i] * 2.0f;
}

void launch_produce(float* out, cudakit::StreamRef s, int n = kN) {
  cudakit::launch(produce, 64, 256, s, {"produce", {cudakit::writes(out, n * sizeof(float), "out")}}, out, n, 1.0f);
}
void launch_consume(const float* in, float* out, cudakit::StreamRef s, int n = kN) {
  cudakit::launch(consume, 64, 256, s,
                  {"consume", {cudakit::reads(in, n * sizeof(float), "in"), cudakit::writes(out, n * sizeof(float), "out")}},
                  in, out, n);
}

float* device_floats(cudakit::StreamRef s) { return static_cast<float*>(cudakit::memory::allocate(kBytes, s)); }

// Runs `program` with the sanitizer on (log mode), returns what it reported.
template <class Program>
std::vector<san::RaceReport> sanitized(Program program) {
  san::enable(san::Mode::log);
  program();
  cudakit::synchronize();
  auto reports = san::reports();
  san::disable();
  return reports;
}

std::string text(const std::vector<san::RaceReport>& reports) {
  std::string s;
  for (const auto& r : reports) s += r.to_string();
  return s;
}

bool found(const std::vector<san::RaceReport>& reports, HazardKind kind) {
  for (const auto& r : reports) {
    if (r.kind == kind) return true;
  }
  return false;
}

// A planted bug's program reports `kind`; its corrected twin reports nothing.
void expect_outcome(const std::vector<san::RaceReport>& reports, bool planted, HazardKind kind) {
  if (planted) {
    EXPECT_TRUE(found(reports, kind)) << "not found: " << san::to_string(kind) << "\n" << text(reports);
  } else {
    EXPECT_TRUE(reports.empty()) << text(reports);
  }
}

TEST(SanitizerGpu, UserKernelReadAfterWriteAcrossStreams) {
  CUDAKIT_REQUIRE_GPU();
  cudakit::Stream s0, s1;
  const auto reports = sanitized([&] {
    float* a = device_floats(s0);
    float* b = device_floats(s1);
    launch_produce(a, s0);
    launch_consume(a, b, s1);  // no wait: races with produce
    s0.synchronize();
    s1.synchronize();
    cudakit::memory::deallocate(a);
    cudakit::memory::deallocate(b);
  });
  ASSERT_TRUE(found(reports, HazardKind::read_after_write)) << text(reports);
  EXPECT_EQ(reports.front().current.name, "consume");
  EXPECT_EQ(reports.front().current.argument, "in");
  EXPECT_EQ(reports.front().previous->name, "produce");
  // The stacks (frame pointers, the default) reach this test's own code, named from the test
  // binary's .symtab (the lambda and launch_consume are local symbols dladdr cannot name).
  for (const auto* stack : {&reports.front().current.stack, &reports.front().previous->stack}) {
    bool named = false;
    for (const auto& f : *stack) named |= f.name.find("UserKernelReadAfterWriteAcrossStreams") != std::string::npos;
    EXPECT_TRUE(named) << text(reports);
  }
}

TEST(SanitizerGpu, JiteratorKernelsTakePartWithTheirOperands) {
  CUDAKIT_REQUIRE_GPU();
  cudakit::Stream s0, s1;
  const ten::TensorOptions on_gpu{ten::DType::float32, ten::Device{ten::Device::Type::cuda, 0}};
  const auto twice = cudakit::jiterator::create_jit_fn("template <typename T> T twice(T x) { return x * T(2); }");
  for (const bool wait : {false, true}) {
    const auto reports = sanitized([&] {
      ten::Tensor x = ten::ones({4096}, on_gpu, s0);
      if (wait) s1.wait_stream(s0);
      ten::Tensor y = twice.call({x}, {.stream = s1}).front();
      cudakit::synchronize();
    });
    expect_outcome(reports, !wait, HazardKind::read_after_write);
    if (!wait && !reports.empty()) EXPECT_EQ(reports.front().current.name, "jiterator") << text(reports);
  }
}

TEST(SanitizerGpu, TunableGemmIsOneOperationWithItsOperands) {
  CUDAKIT_REQUIRE_GPU();
  cudakit::Stream s0, s1;
  constexpr int kDim = 64;
  for (const bool wait : {false, true}) {
    float* a = static_cast<float*>(cudakit::memory::allocate(kDim * kDim * sizeof(float), s0));
    float* c = static_cast<float*>(cudakit::memory::allocate(kDim * kDim * sizeof(float), s1));
    std::uint64_t unchecked = 1;
    const auto reports = sanitized([&] {
      launch_produce(a, s0, kDim * kDim);
      if (wait) s1.wait_stream(s0);
      cudakit::tunable::GemmArgs args;
      args.key.m = args.key.n = args.key.k = kDim;
      args.key.lda = args.key.ldb = args.key.ldc = kDim;
      args.a = args.b = a;
      args.c = c;
      cudakit::tunable::gemm(args, s1);
      cudakit::synchronize();
      unchecked = san::stats().unchecked_launches;
    });
    expect_outcome(reports, !wait, HazardKind::read_after_write);
    if (!wait && !reports.empty()) {
      EXPECT_EQ(reports.front().current.name, "tunable.gemm") << text(reports);
      EXPECT_EQ(reports.front().previous->name, "produce") << text(reports);
    }
    EXPECT_EQ(unchecked, 0u) << "the GEMM's own kernels declare their accesses";
    cudakit::memory::deallocate(a);
    cudakit::memory::deallocate(c);
  }
}

// Tuning runs Default and every candidate on buffers of its own, checks them with kernels that
// read Default's output, and times them: all of it is real work the sanitizer must see, in order,
// so that a correctly tuned GEMM is reported as nothing (the tuner's runs used to be invisible,
// and the check kernels then read memory "nothing wrote").
TEST(SanitizerGpu, TuningAGemmUnderTheSanitizerReportsNothing) {
  CUDAKIT_REQUIRE_GPU();
  namespace tun = cudakit::tunable;
  const bool enabled = tun::is_enabled(), tuning = tun::tuning_is_enabled();
  tun::enable(true);
  tun::tuning_enable(true);
  cudakit::Stream s0;
  constexpr int kDim = 96 + 8;  // a shape no other test tunes in this process
  float* a = static_cast<float*>(cudakit::memory::allocate(kDim * kDim * sizeof(float), s0));
  float* c = static_cast<float*>(cudakit::memory::allocate(kDim * kDim * sizeof(float), s0));
  std::uint64_t unchecked = 1, operations = 0;
  const auto reports = sanitized([&] {
    launch_produce(a, s0, kDim * kDim);
    tun::GemmArgs args;
    args.key.m = args.key.n = args.key.k = kDim;
    args.key.lda = args.key.ldb = args.key.ldc = kDim;
    args.a = args.b = a;
    args.c = c;
    tun::gemm(args, s0);  // tunes (the shape is new), then runs the chosen solution
    cudakit::synchronize();
    unchecked = san::stats().unchecked_launches;
    operations = san::stats().operations;
  });
  tun::enable(enabled);
  tun::tuning_enable(tuning);
  EXPECT_TRUE(reports.empty()) << text(reports);
  EXPECT_EQ(unchecked, 0u);
  EXPECT_GT(operations, 4u) << "the tuner's runs and checks are tracked, not only the final GEMM";
  cudakit::memory::deallocate(a);
  cudakit::memory::deallocate(c);
}

TEST(SanitizerGpu, UserKernelsChainedByAnEventAreNotReported) {
  CUDAKIT_REQUIRE_GPU();
  cudakit::Stream s0, s1;
  cudakit::Event ready;
  const auto reports = sanitized([&] {
    float* a = device_floats(s0);
    float* b = device_floats(s1);
    launch_produce(a, s0);
    ready.record(s0);
    ready.wait(s1);
    launch_consume(a, b, s1);
    cudakit::memory::record_stream(a, s1);
    cudakit::memory::deallocate(a);  // record_stream: the allocator waits for s1 itself
    s1.synchronize();
    cudakit::memory::deallocate(b);
  });
  EXPECT_TRUE(reports.empty()) << text(reports);
}

TEST(SanitizerGpu, WriteAfterReadAcrossStreams) {
  CUDAKIT_REQUIRE_GPU();
  cudakit::Stream s0, s1;
  const auto reports = sanitized([&] {
    float* a = device_floats(s0);
    float* b = device_floats(s1);
    launch_produce(a, s0);
    s0.synchronize();
    launch_consume(a, b, s1);
    launch_produce(a, s0);  // overwrites a while s1 may still read it
    cudakit::synchronize();
    cudakit::memory::deallocate(a);
    cudakit::memory::deallocate(b);
  });
  EXPECT_TRUE(found(reports, HazardKind::write_after_read)) << text(reports);
}

TEST(SanitizerGpu, FreeWithoutRecordStreamIsReportedAndWithItIsNot) {
  CUDAKIT_REQUIRE_GPU();
  cudakit::Stream s0, s1;
  cudakit::Event ready;
  for (const bool record : {false, true}) {
    const auto reports = sanitized([&] {
      float* a = device_floats(s0);
      float* b = device_floats(s1);
      launch_produce(a, s0);
      ready.record(s0);
      ready.wait(s1);
      launch_consume(a, b, s1);
      if (record) cudakit::memory::record_stream(a, s1);
      cudakit::memory::deallocate(a);
      s1.synchronize();
      cudakit::memory::deallocate(b);
    });
    expect_outcome(reports, !record, HazardKind::free_while_in_use);
  }
}

TEST(SanitizerGpu, OverlappingTensorSlicesAcrossStreams) {
  CUDAKIT_REQUIRE_GPU();
  cudakit::Stream s0, s1;
  const ten::TensorOptions on_gpu{ten::DType::float32, ten::Device{ten::Device::Type::cuda, 0}};
  for (const bool overlapping : {true, false}) {
    const auto reports = sanitized([&] {
      ten::Tensor x = ten::zeros({1024}, on_gpu, s0);
      s0.synchronize();
      ten::Tensor left = x.slice(0, 0, overlapping ? 600 : 512);
      ten::Tensor right = x.slice(0, 512, 1024);
      left.fill_(1.0, s0);
      right.fill_(2.0, s1);
      cudakit::synchronize();
    });
    expect_outcome(reports, overlapping, HazardKind::write_after_write);
  }
}

TEST(SanitizerGpu, TensorOpsOnAnotherStreamNeedAWait) {
  CUDAKIT_REQUIRE_GPU();
  cudakit::Stream s0, s1;
  const ten::TensorOptions on_gpu{ten::DType::float32, ten::Device{ten::Device::Type::cuda, 0}};
  for (const bool wait : {false, true}) {
    const auto reports = sanitized([&] {
      ten::Tensor a = ten::ones({256, 256}, on_gpu, s0);
      if (wait) s1.wait_stream(s0);
      ten::Tensor c = ten::matmul(a, a, s1);
      ten::Tensor d = ten::add(c, 1.0, s1);
      cudakit::synchronize();  // before the tensors are freed: no record_stream needed
      (void)d;
    });
    expect_outcome(reports, !wait, HazardKind::read_after_write);
  }
}

TEST(SanitizerGpu, ThrowModeRefusesARacyLaunchBeforeItIsQueued) {
  CUDAKIT_REQUIRE_GPU();
  cudakit::Stream s0, s1;
  float* a = device_floats(s0);
  float* b = device_floats(s1);
  s0.synchronize();
  san::enable(san::Mode::throw_error);
  launch_produce(a, s0);
  EXPECT_THROW(launch_consume(a, b, s1), san::SanitizerError);
  san::disable();
  cudakit::synchronize();
  cudakit::memory::deallocate(a);
  cudakit::memory::deallocate(b);
}

TEST(SanitizerGpu, RaceInsideAReplayedGraph) {
  CUDAKIT_REQUIRE_GPU();
  cudakit::Stream side, replay_stream;
  for (const bool joined_before_read : {false, true}) {
    float* a = device_floats(replay_stream);
    float* b = device_floats(replay_stream);
    cudakit::synchronize();
    cudakit::Event fork, done, join;
    const auto reports = sanitized([&] {
      cudakit::graphs::Graph graph;
      {
        cudakit::graphs::GraphCapture capture(graph);
        const cudakit::StreamRef cs = capture.stream();
        fork.record(cs);
        fork.wait(side);  // side joins the capture
        launch_produce(a, cs);
        if (joined_before_read) {
          done.record(cs);
          done.wait(side);
        }
        launch_consume(a, b, side);
        join.record(side);
        join.wait(cs);
      }
      graph.replay(replay_stream);
      graph.replay(replay_stream);
      replay_stream.synchronize();
    });
    expect_outcome(reports, !joined_before_read, HazardKind::read_after_write);
    cudakit::memory::deallocate(a);
    cudakit::memory::deallocate(b);
  }
}

TEST(SanitizerGpu, UndeclaredLaunchesAreCountedAsUnchecked) {
  CUDAKIT_REQUIRE_GPU();
  cudakit::Stream s0;
  float* a = device_floats(s0);
  san::enable(san::Mode::log);
  cudakit::launch_kernel("undeclared_produce", produce, {64, 256}, s0, a, kN, 3.0f);
  const auto stats = san::stats();
  san::disable();
  EXPECT_EQ(stats.unchecked_launches, 1u);
  s0.synchronize();
  cudakit::memory::deallocate(a);
}

}  // namespace
