// Host tier: the byte ranges a GEMM reports to the trace hooks (what the stream sanitizer checks
// for tunable::gemm), from its key: each operand from its first element to its last.

#include <gtest/gtest.h>

#include "cudakit/tunable/gemm.hpp"
#include "tunable/detail/plan.hpp"

namespace cudakit::tunable {
namespace {

TEST(GemmAccesses, SpanEachOperandFromItsFirstToItsLastElement) {
  alignas(16) static char a[1], b[1], c[1];
  GemmArgs args;
  args.key.transa = 't';  // A is k x m in memory (lda >= k), B is k x n (ldb >= k), C is m x n
  args.key.transb = 'n';
  args.key.m = 8;
  args.key.n = 3;
  args.key.k = 5;
  args.key.lda = 6;
  args.key.ldb = 7;
  args.key.ldc = 10;
  args.key.a_type = args.key.b_type = args.key.c_type = GemmDType::float16;
  args.a = a;
  args.b = b;
  args.c = c;
  const auto accesses = detail::gemm_accesses(args);
  EXPECT_EQ(accesses[0].begin, a);
  EXPECT_EQ(accesses[0].bytes, ((8 - 1) * 6 + 5) * 2u);  // 8 columns of 5, 6 apart
  EXPECT_EQ(accesses[0].mode, MemoryAccess::Mode::read);
  EXPECT_EQ(accesses[1].bytes, ((3 - 1) * 7 + 5) * 2u);  // 3 columns of 5, 7 apart
  EXPECT_EQ(accesses[2].begin, c);
  EXPECT_EQ(accesses[2].bytes, ((3 - 1) * 10 + 8) * 2u);  // 3 columns of 8, 10 apart
  EXPECT_EQ(accesses[2].mode, MemoryAccess::Mode::write) << "beta 0: C is only written";
  for (int i = 3; i < 6; ++i) EXPECT_EQ(accesses[i].bytes, 0u) << "no bias, no scales";

  args.beta = 1;
  args.key.op = GemmOp::gemm_strided_batched;
  args.key.batch = 4;
  args.key.stride_c = 100;
  args.bias = b;
  const auto batched = detail::gemm_accesses(args);
  EXPECT_EQ(batched[2].mode, MemoryAccess::Mode::read_write) << "beta 1: C is read too";
  EXPECT_EQ(batched[2].bytes, ((3 - 1) * 10 + 8 + 3 * 100) * 2u);  // the last of 4 matrices, 100 apart
  EXPECT_EQ(batched[3].bytes, 8 * 2u);                          // m elements of bias

  args.key.m = 0;
  EXPECT_EQ(detail::gemm_accesses(args)[0].bytes, 0u) << "an empty GEMM touches nothing";
}

// A ScaledGemm's scales are read whole: one float per tensor, or the floats of their layout.
TEST(GemmAccesses, ScalesSpanTheirLayouts) {
  alignas(16) static float scales[2][1];
  GemmArgs args;
  args.key.op = GemmOp::scaled_gemm;
  args.key.m = 300;  // 3 blocks of rows
  args.key.n = 16;
  args.key.k = 640;  // 5 k-blocks: block rows 8 apart
  args.scale_a = scales[0];
  args.scale_b = scales[1];
  EXPECT_EQ(detail::gemm_accesses(args)[4].bytes, sizeof(float));
  args.key.scale_a_mode = ScaleMode::blk128x128;
  args.key.scale_b_mode = ScaleMode::vec128;
  auto accesses = detail::gemm_accesses(args);
  EXPECT_EQ(accesses[4].begin, scales[0]);
  EXPECT_EQ(accesses[4].bytes, 3 * 8 * sizeof(float));
  EXPECT_EQ(accesses[5].bytes, 16 * 5 * sizeof(float));
  args.key.scale_a_mode = args.key.scale_b_mode = ScaleMode::outer_vec;
  accesses = detail::gemm_accesses(args);
  EXPECT_EQ(accesses[4].bytes, 300 * sizeof(float));
  EXPECT_EQ(accesses[5].bytes, 16 * sizeof(float));
}

}  // namespace
}  // namespace cudakit::tunable
