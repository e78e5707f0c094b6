// The CUTLASS candidates' host logic: their names as results files write them, and which keys
// and devices get them (Note [CUTLASS candidates]).

#include <gtest/gtest.h>

#include <string>

#include "cudakit/core/error.hpp"
#include "cudakit/tunable/gemm_key.hpp"
#include "cudakit/tunable/solution.hpp"
#include "tunable/detail/cutlass_gemm.hpp"

namespace cudakit::tunable {
namespace {

using detail::cutlass_applicable;
using detail::cutlass_candidates;
using detail::cutlass_solution;
using detail::kCutlassConfigs;

constexpr int kHopper = 90;

// torch's F.linear in bfloat16 (TN), large and square.
GemmKey linear_key(std::int64_t m = 4096, std::int64_t n = 4096, std::int64_t k = 4096) {
  GemmKey key;
  key.transa = 't';
  key.transb = 'n';
  key.m = m;
  key.n = n;
  key.k = k;
  key.lda = k;
  key.ldb = k;
  key.ldc = m;
  key.a_type = key.b_type = key.c_type = GemmDType::bfloat16;
  key.workspace_bytes = 32 << 20;
  key.alignment = 256;
  key.sm_count = 132;
  return key;
}

// torch.matmul of row-major tensors (NN).
GemmKey matmul_key(std::int64_t m, std::int64_t n, std::int64_t k) {
  GemmKey key = linear_key(m, n, k);
  key.transa = 'n';
  key.lda = m;
  return key;
}

// Each configuration at swizzle 1 (applicability does not depend on the swizzle otherwise).
bool applies_to_every_config(const GemmKey& key, int capability = kHopper) {
  for (const CutlassConfig& c : kCutlassConfigs) {
    if (!cutlass_applicable(key, cutlass_solution(c), capability)) return false;
  }
  return true;
}

bool applies_to_no_config(const GemmKey& key, int capability = kHopper) {
  for (const CutlassConfig& c : kCutlassConfigs) {
    if (cutlass_applicable(key, cutlass_solution(c), capability)) return false;
  }
  return true;
}

TEST(CutlassCandidates, NamesRoundTripAndSayTileClusterScheduleAndSwizzle) {
  for (const Solution& s : cutlass_candidates(linear_key(), kHopper)) {
    SCOPED_TRACE(s.name());
    EXPECT_EQ(Solution::parse(s.name()), s);
  }
  for (CutlassConfig c : kCutlassConfigs) {
    c.swizzle = 8;
    EXPECT_EQ(Solution::parse(cutlass_solution(c).name()), cutlass_solution(c));
  }
  CutlassConfig pingpong{128, 128, 64, 1, 2, CutlassSchedule::pingpong};
  EXPECT_EQ(cutlass_solution(pingpong).name(), "Cutlass_t128x128x64_g1x2_pingpong_s1");
  CutlassConfig stream_k{256, 128, 64, 2, 1, CutlassSchedule::stream_k, 4};
  EXPECT_EQ(cutlass_solution(stream_k).name(), "Cutlass_t256x128x64_g2x1_streamk_s4");
  // A configuration this build does not have still parses (a results file of another build):
  // make_plan refuses it, and the key is tuned again.
  const Solution other = Solution::parse("Cutlass_t64x128x128_g1x1_coop_s2");
  EXPECT_EQ(other.kind, Solution::Kind::cutlass);
  EXPECT_EQ(other.cutlass, (CutlassConfig{64, 128, 128, 1, 1, CutlassSchedule::cooperative, 2}));
  EXPECT_FALSE(cutlass_applicable(linear_key(), other, kHopper));
}

TEST(CutlassCandidates, EveryKernelAtSwizzles1To8AndNoOther) {
  for (CutlassConfig c : kCutlassConfigs) {
    for (const int swizzle : {1, 2, 4, 8}) {
      c.swizzle = swizzle;
      EXPECT_TRUE(cutlass_applicable(linear_key(), cutlass_solution(c), kHopper))
          << cutlass_solution(c).name();
    }
    for (const int swizzle : {3, 16}) {
      c.swizzle = swizzle;
      EXPECT_FALSE(cutlass_applicable(linear_key(), cutlass_solution(c), kHopper))
          << cutlass_solution(c).name();
    }
  }
}

TEST(CutlassCandidates, MalformedNamesAreRefusedWithTheText) {
  for (const char* bad :
       {"Cutlass_", "Cutlass_t128x256x64", "Cutlass_t128x256x64_g2x1", "Cutlass_t128x256x64_g2x1_",
        "Cutlass_t128x256x64_g2x1_coop", "Cutlass_t128x256x64_g2x1_coop_", "Cutlass_t128x256x64_g2x1_coop_s",
        "Cutlass_t128x256x64_g2x1_coop_s0", "Cutlass_t128x256x64_g2x1_coop_s4_",
        "Cutlass_t128x256x64_g2x1_coops4", "Cutlass_t128x256_g2x1_coop_s1", "Cutlass_t0x256x64_g2x1_coop_s1",
        "Cutlass_t128x256x64_g2_coop_s1", "Cutlass_t128x256x64_g2x1_fast_s1",
        "Cutlass_t-128x256x64_g2x1_coop_s1", "Cutlass_t128x256x64x2_g2x1_coop_s1",
        "cutlass_t128x256x64_g2x1_coop_s1"}) {
    try {
      (void)Solution::parse(bad);
      ADD_FAILURE() << bad << " parsed";
    } catch (const InvalidArgumentError& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("\"") + bad + "\""), std::string::npos) << e.what();
    }
  }
}

TEST(CutlassCandidates, OfferedForBf16AndFp16LinearAndMatmulOnHopperOnly) {
  EXPECT_TRUE(applies_to_every_config(linear_key()));
  EXPECT_TRUE(applies_to_every_config(matmul_key(4096, 4096, 4096)));
  GemmKey fp16 = linear_key();
  fp16.a_type = fp16.b_type = fp16.c_type = GemmDType::float16;
  EXPECT_TRUE(applies_to_every_config(fp16));
  // sm_90a code: not Ampere, Ada or Blackwell.
  for (const int capability : {80, 89, 100, 120})
    EXPECT_TRUE(applies_to_no_config(linear_key(), capability)) << capability;
  // Sizes that are not tile multiples, and n of any value (no operand is contiguous along n).
  EXPECT_TRUE(applies_to_every_config(linear_key(1000, 777, 1032)));
  EXPECT_TRUE(applies_to_every_config(matmul_key(1000, 777, 1032)));
}

TEST(CutlassCandidates, RefusedForWhatTheKernelsDoNotDo) {
  const auto refused = [](const char* what, auto change) {
    GemmKey key = linear_key();
    change(key);
    EXPECT_TRUE(applies_to_no_config(key)) << what;
  };
  refused("float32", [](GemmKey& k) { k.a_type = k.b_type = k.c_type = GemmDType::float32; });
  refused("tf32", [](GemmKey& k) {
    k.a_type = k.b_type = k.c_type = GemmDType::float32;
    k.tf32 = true;
  });
  refused("float64", [](GemmKey& k) { k.a_type = k.b_type = k.c_type = GemmDType::float64; });
  refused("a float32 output", [](GemmKey& k) { k.c_type = GemmDType::float32; });
  refused("an epilogue", [](GemmKey& k) {
    k.op = GemmOp::gemm_and_bias;
    k.epilogue = Epilogue::bias;
  });
  refused("FP8", [](GemmKey& k) {
    k.op = GemmOp::scaled_gemm;
    k.a_type = k.b_type = GemmDType::float8_e4m3;
  });
  refused("op(B) N-major (transb = t)", [](GemmKey& k) {
    k.transb = 't';
    k.ldb = k.n;
  });
  refused("8-byte aligned pointers", [](GemmKey& k) { k.alignment = 8; });
  refused("lda not a 16-byte multiple", [](GemmKey& k) { k.lda = 4100; });
  refused("ldb not a 16-byte multiple", [](GemmKey& k) { k.ldb = 4097; });
  refused("ldc not a 16-byte multiple", [](GemmKey& k) { k.ldc = 4099; });
  refused("k not a 16-byte multiple", [](GemmKey& k) { k.k = 4092; });
  refused("m not a 16-byte multiple (C is M-major)", [](GemmKey& k) { k.m = 4092; });
  refused("a decode shape (n <= 16)", [](GemmKey& k) { k.n = 16; });
  refused("a decode shape (m <= 16)", [](GemmKey& k) { k.m = 8; });
  refused("m past int", [](GemmKey& k) { k.m = k.ldc = std::int64_t{1} << 31; });
  refused("a batch stride not a 16-byte multiple", [](GemmKey& k) {
    k.op = GemmOp::gemm_strided_batched;
    k.batch = 4;
    k.stride_a = k.m * k.k + 4;
    k.stride_b = k.n * k.k;
    k.stride_c = k.m * k.n;
  });
  GemmKey batched = linear_key(512, 384, 256);
  batched.op = GemmOp::gemm_strided_batched;
  batched.batch = 4;
  batched.stride_a = 512 * 256 + 8;  // padded
  batched.stride_b = 384 * 256;
  batched.stride_c = 512 * 384;
  EXPECT_TRUE(applies_to_every_config(batched));
  GemmKey broadcast = batched;
  broadcast.stride_b = 0;  // one B for every batch: a TMA descriptor cannot say it
  EXPECT_TRUE(applies_to_no_config(broadcast));
  GemmKey overlapping = batched;
  overlapping.stride_c = 512 * 384 - 512;  // the last column of one batch is the next one's first
  EXPECT_TRUE(applies_to_no_config(overlapping));
}

TEST(CutlassCandidates, TheTunerGetsEachConfigurationAtEachSwizzleWhereTheBuildHasThem) {
  const std::size_t expected =
      detail::cutlass_built() ? std::size(kCutlassConfigs) * std::size(detail::kCutlassSwizzles) : 0;
  const std::vector<Solution> offered = cutlass_candidates(linear_key(), kHopper);
  EXPECT_EQ(offered.size(), expected);
  for (const Solution& s : offered) EXPECT_EQ(s.kind, Solution::Kind::cutlass);
  EXPECT_TRUE(cutlass_candidates(linear_key(), 100).empty());
  GemmKey fp32 = linear_key();
  fp32.a_type = fp32.b_type = fp32.c_type = GemmDType::float32;
  EXPECT_TRUE(cutlass_candidates(fp32, kHopper).empty());
}

}  // namespace
}  // namespace cudakit::tunable
