// GPU tier: each CUTLASS candidate (Note [CUTLASS candidates]) against cuBLAS's Default on the
// same operands, within the tuner's tolerance (Note [GEMM tolerance]), on shapes that are and are
// not tile multiples, batched, with alpha and beta; the tuner offering them where they apply.

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cudakit/core/current_stream.hpp"
#include "cudakit/core/device.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/core/stream.hpp"
#include "cudakit/tensor/factories.hpp"
#include "cudakit/tunable/gemm.hpp"
#include "cudakit/tunable/tolerance.hpp"
#include "cudakit/tunable/tunable.hpp"
#include "support/gpu_test.hpp"
#include "tunable/tuning_gpu_fixture.hpp"
#include "tunable/detail/check_kernels.hpp"
#include "tunable/detail/cutlass_gemm.hpp"

namespace {

using namespace cudakit;
using namespace cudakit::tunable;
using tensor::Device;
using tensor::Tensor;

bool on_hopper() { return get_device_capability() == std::pair{9, 0}; }

#define CUDAKIT_REQUIRE_CUTLASS_ON_HOPPER()                                                           \
  do {                                                                                                \
    CUDAKIT_REQUIRE_GPU();                                                                            \
    if (!tunable::detail::cutlass_built()) GTEST_SKIP() << "built without CUDAKIT_CUTLASS";           \
    if (!on_hopper()) GTEST_SKIP() << "the CUTLASS kernels are sm_90a code (compute capability 9.0)"; \
  } while (0)

GemmKey key_of(GemmDType t, char transa, std::int64_t m, std::int64_t n, std::int64_t k) {
  GemmKey key;
  key.transa = transa;
  key.transb = 'n';
  key.m = m;
  key.n = n;
  key.k = k;
  key.lda = transa == 'n' ? m : k;
  key.ldb = k;
  key.ldc = m;
  key.a_type = key.b_type = key.c_type = t;
  return key;
}

std::int64_t elements(std::int64_t rows, std::int64_t cols, std::int64_t ld, std::int64_t batch,
                      std::int64_t stride) {
  return ld * (cols - 1) + rows + (batch - 1) * stride;
}

Tensor copy_of(const Tensor& t) {
  Tensor copy = tensor::empty_like(t);
  copy.copy_(t);
  return copy;
}

// Random operands for `key`, C holding random values too (beta reads them), and a copy of C for
// Default's result.
struct Operands {
  GemmKey key;
  Tensor a, b, c, reference;
  explicit Operands(const GemmKey& k) : key(k) {
    const tensor::DType dtype =
        k.a_type == GemmDType::bfloat16 ? tensor::DType::bfloat16 : tensor::DType::float16;
    const auto make = [&](std::int64_t count, std::uint64_t seed) {
      Tensor t = tensor::empty({count}, {dtype, Device::cuda()});
      tunable::detail::fill_random(t.data_ptr(), k.a_type, static_cast<std::size_t>(count), seed,
                                   current_stream());
      return t;
    };
    a = make(elements(k.transa == 'n' ? k.m : k.k, k.transa == 'n' ? k.k : k.m, k.lda, k.batch, k.stride_a),
             1);
    b = make(elements(k.k, k.n, k.ldb, k.batch, k.stride_b), 2);
    c = make(elements(k.m, k.n, k.ldc, k.batch, k.stride_c), 3);
    reference = copy_of(c);
  }
  GemmArgs args(const Tensor& out, double alpha, double beta) const {
    GemmArgs g;
    g.key = key;
    g.a = a.data_ptr();
    g.b = b.data_ptr();
    g.c = out.data_ptr();
    g.alpha = alpha;
    g.beta = beta;
    return g;
  }
  // The worst tolerance ratio of `solution`'s result against Default's (C as given before both).
  double worst_against_default(const Solution& solution, double alpha, double beta) {
    const Tensor start = copy_of(c);
    gemm_with_solution(args(reference, alpha, beta), Solution::default_solution());
    gemm_with_solution(args(c, alpha, beta), solution);
    const double ratio = tunable::detail::max_tolerance_ratio(c.data_ptr(), reference.data_ptr(), key.c_type,
                                                              key.m, key.n, key.ldc, key.batch, key.stride_c,
                                                              gemm_tolerance(key), current_stream());
    c.copy_(start);
    reference.copy_(start);
    return ratio;
  }
};

// Every configuration at every swizzle the tuner offers.
std::vector<Solution> every_cutlass_solution() {
  std::vector<Solution> all;
  for (CutlassConfig c : tunable::detail::kCutlassConfigs) {
    for (const int swizzle : tunable::detail::kCutlassSwizzles) {
      c.swizzle = swizzle;
      all.push_back(tunable::detail::cutlass_solution(c));
    }
  }
  return all;
}

using CutlassGpu = cudakit::testing::TuningGpuTest;

TEST_F(CutlassGpu, EveryKernelMatchesDefaultOnTileMultiplesAndOtherSizes) {
  CUDAKIT_REQUIRE_CUTLASS_ON_HOPPER();
  struct Size {
    std::int64_t m, n, k;
  };
  for (const GemmDType t : {GemmDType::bfloat16, GemmDType::float16}) {
    for (const char transa : {'t', 'n'}) {
      // Tile multiples; m, n, k past them (n odd); a long k; fewer tiles than SMs and more.
      for (const Size size :
           {Size{512, 768, 256}, Size{1000, 777, 1032}, Size{264, 136, 4104}, Size{2056, 1544, 1536}}) {
        const GemmKey key = key_of(t, transa, size.m, size.n, size.k);
        SCOPED_TRACE(key.op_name() + " " + key.signature());
        Operands o(key);
        for (const Solution& s : every_cutlass_solution()) {
          SCOPED_TRACE(s.name());
          EXPECT_LE(o.worst_against_default(s, 1.0, 0.0), 1.0);
        }
      }
    }
  }
}

TEST_F(CutlassGpu, AlphaBetaAndBatchesMatchDefault) {
  CUDAKIT_REQUIRE_CUTLASS_ON_HOPPER();
  for (const char transa : {'t', 'n'}) {
    GemmKey key = key_of(GemmDType::bfloat16, transa, 392, 200, 520);
    key.op = GemmOp::gemm_strided_batched;
    key.batch = 3;
    key.stride_a = 392 * 520 + 8;  // padded: not the packed stride
    key.stride_b = 520 * 200 + 16;
    key.ldc = 400;  // C's columns padded
    key.stride_c = 400 * 200;
    SCOPED_TRACE(key.op_name() + " " + key.signature());
    Operands o(key);
    for (const Solution& s : every_cutlass_solution()) {
      SCOPED_TRACE(s.name());
      EXPECT_LE(o.worst_against_default(s, 0.5, 0.0), 1.0);
      EXPECT_LE(o.worst_against_default(s, 1.0, 0.75), 1.0);  // beta reads C
    }
  }
}

TEST_F(CutlassGpu, WhatTheKernelsCannotAddressIsRefusedNotRun) {
  CUDAKIT_REQUIRE_CUTLASS_ON_HOPPER();
  const GemmKey key = key_of(GemmDType::bfloat16, 't', 256, 256, 256);
  Operands o(key);
  GemmArgs shifted = o.args(o.c, 1.0, 0.0);
  shifted.a = static_cast<const char*>(shifted.a) + 2;  // one element on: 2-byte aligned
  ASSERT_LT(complete_key(shifted).alignment, 16);
  for (const Solution& s : every_cutlass_solution()) {
    EXPECT_THROW(gemm_with_solution(shifted, s), InvalidArgumentError) << s.name();
  }
  GemmKey nt = key;
  nt.transb = 't';
  nt.ldb = nt.n;
  Operands p(nt);
  EXPECT_THROW(gemm_with_solution(p.args(p.c, 1.0, 0.0), every_cutlass_solution().front()),
               InvalidArgumentError);
}

TEST_F(CutlassGpu, TheTunerTimesEveryKernelForABf16KeyAndNoneForFloat32) {
  CUDAKIT_REQUIRE_CUTLASS_ON_HOPPER();
  Operands o(key_of(GemmDType::bfloat16, 't', 1024, 1024, 1024));
  const TuningReport report = tune(complete_key(o.args(o.c, 1.0, 0.0)));
  for (const Solution& s : every_cutlass_solution()) {
    // Timed: it ran and passed the comparison with Default (a dropped one would be in `dropped`).
    EXPECT_NE(std::find(report.candidates.begin(), report.candidates.end(), s), report.candidates.end())
        << s.name() << " was not timed";
  }
  for (const std::string& d : report.dropped) EXPECT_EQ(d.find("Cutlass_"), std::string::npos) << d;

  GemmKey fp32 = key_of(GemmDType::float32, 't', 1024, 1024, 1024);
  Tensor a = tensor::zeros({1024 * 1024}, {tensor::DType::float32, Device::cuda()});
  GemmArgs g;
  g.key = fp32;
  g.a = g.b = g.c = a.data_ptr();
  const TuningReport fp32_report = tune(complete_key(g));
  for (const Solution& s : fp32_report.candidates) EXPECT_NE(s.kind, Solution::Kind::cutlass) << s.name();
}

TEST_F(CutlassGpu, OffHopperTheTunerOffersNone) {
  CUDAKIT_REQUIRE_GPU();
  if (on_hopper()) GTEST_SKIP() << "a compute capability 9.0 device: the kernels apply here";
  const GemmKey key = key_of(GemmDType::bfloat16, 't', 1024, 1024, 1024);
  Operands o(key);
  const TuningReport report = tune(complete_key(o.args(o.c, 1.0, 0.0)));
  for (const Solution& s : report.candidates) EXPECT_NE(s.kind, Solution::Kind::cutlass) << s.name();
  EXPECT_THROW(gemm_with_solution(o.args(o.c, 1.0, 0.0), every_cutlass_solution().front()),
               InvalidArgumentError);
}

}  // namespace
