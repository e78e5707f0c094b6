#include "cudakit/tunable/gemm_key.hpp"

#include <gtest/gtest.h>

#include <unordered_set>

#include "cudakit/core/error.hpp"

namespace cudakit::tunable {
namespace {

GemmKey bf16_decode() {
  GemmKey key;
  key.transa = 't';
  key.transb = 'n';
  key.m = 4096;
  key.n = 16;
  key.k = 4096;
  key.lda = 4096;
  key.ldb = 4096;
  key.ldc = 4096;
  key.a_type = key.b_type = key.c_type = GemmDType::bfloat16;
  key.workspace_bytes = 32 << 20;
  key.alignment = 16;
  key.sm_count = 132;
  return key;
}

TEST(GemmKey, WritesTorchsOpNameAndSignatureWithCudakitsFields) {
  const GemmKey key = bf16_decode();
  EXPECT_EQ(key.op_name(), "GemmTunableOp_BFloat16_TN");
  EXPECT_EQ(key.signature(), "tn_4096_16_4096_ld_4096_4096_4096_ws_33554432_al_16_sm_132");
}

TEST(GemmKey, NamesEachOperationAsTorchDoes) {
  GemmKey batched = bf16_decode();
  batched.op = GemmOp::gemm_strided_batched;
  batched.a_type = batched.b_type = batched.c_type = GemmDType::float32;
  batched.batch = 8;
  batched.stride_a = 4096 * 4096;
  batched.stride_b = 4096 * 16;
  batched.stride_c = 4096 * 16;
  EXPECT_EQ(batched.op_name(), "GemmStridedBatchedTunableOp_float_TN");
  EXPECT_EQ(batched.signature(),
            "tn_4096_16_4096_B_8_ld_4096_4096_4096_st_16777216_65536_65536_ws_33554432_al_16_sm_132");

  GemmKey bias = bf16_decode();
  bias.op = GemmOp::gemm_and_bias;
  bias.epilogue = Epilogue::bias_gelu;
  EXPECT_EQ(bias.op_name(), "GemmAndBiasTunableOp_BFloat16_TN");
  EXPECT_NE(bias.signature().find("_ep_bias_gelu_"), std::string::npos);

  GemmKey fp8 = bf16_decode();
  fp8.op = GemmOp::scaled_gemm;
  fp8.a_type = GemmDType::float8_e4m3;
  fp8.b_type = GemmDType::float8_e5m2;
  EXPECT_EQ(fp8.op_name(), "ScaledGemmTunableOp_Float8_e4m3fn_Float8_e5m2_BFloat16_TN");
}

TEST(GemmKey, ParsesWhatItWrites) {
  std::vector<GemmKey> keys{bf16_decode()};
  GemmKey batched = bf16_decode();
  batched.op = GemmOp::gemm_strided_batched;
  batched.batch = 3;
  batched.stride_a = 0;  // a broadcast operand
  batched.stride_b = 4096 * 16;
  batched.stride_c = 4096 * 16;
  keys.push_back(batched);
  GemmKey relu = bf16_decode();
  relu.op = GemmOp::gemm_and_bias;
  relu.epilogue = Epilogue::bias_relu;
  keys.push_back(relu);
  GemmKey tf32 = bf16_decode();
  tf32.a_type = tf32.b_type = tf32.c_type = GemmDType::float32;
  tf32.tf32 = true;
  tf32.alignment = 4;
  tf32.sm_count = 66;
  keys.push_back(tf32);
  GemmKey fp8 = bf16_decode();
  fp8.op = GemmOp::scaled_gemm;
  fp8.a_type = GemmDType::float8_e4m3;
  fp8.b_type = GemmDType::float8_e4m3;
  fp8.c_type = GemmDType::float32;
  keys.push_back(fp8);
  for (const GemmKey& key : keys) {
    SCOPED_TRACE(key.op_name() + "," + key.signature());
    EXPECT_EQ(GemmKey::parse(key.op_name(), key.signature()), key);
  }
}

TEST(GemmKey, RefusesMalformedFieldsNamingThem) {
  const GemmKey key = bf16_decode();
  const auto message = [](std::string_view op, std::string_view sig) {
    try {
      (void)GemmKey::parse(op, sig);
    } catch (const InvalidArgumentError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("GemmTunableOp_Int8_TN", key.signature()).find("unknown element type"), std::string::npos);
  EXPECT_NE(message("GemmTunableOp_BFloat16_NN", key.signature()).find("transposes differ"), std::string::npos);
  EXPECT_NE(message(key.op_name(), "tn_4096_16_4096_ld_4096_4096_4096").find("_ws_"), std::string::npos);
  EXPECT_NE(message(key.op_name(), "tn_-1_16_4096_ld_4096_4096_4096_ws_0_al_16_sm_132").find("m is -1"),
            std::string::npos);
  EXPECT_NE(message(key.op_name(), "tn_4096_16_4096_ld_100_4096_4096_ws_0_al_16_sm_132").find("lda 100"),
            std::string::npos);
  EXPECT_NE(message(key.op_name(), key.signature() + "x").find("unexpected \"x\""), std::string::npos);
  EXPECT_NE(message(key.op_name(), "tn_4096_16_4096_ld_4096_4096_4096_ws_0_al_3_sm_132").find("alignment class 3"),
            std::string::npos);
  EXPECT_NE(message(key.op_name(), "tn_4096_16_4096_ld_4096_4096_4096_ws_0_al_512_sm_132").find("from 1 to 256"),
            std::string::npos);
  EXPECT_EQ(GemmKey::parse(key.op_name(), "tn_4096_16_4096_ld_4096_4096_4096_ws_0_al_256_sm_132").alignment, 256);
}

TEST(GemmKey, Fp8KeysMustBeTn) {
  GemmKey fp8 = bf16_decode();
  fp8.op = GemmOp::scaled_gemm;
  fp8.a_type = fp8.b_type = GemmDType::float8_e4m3;
  fp8.validate("test");
  fp8.transa = 'n';
  fp8.lda = 4096;
  try {
    fp8.validate("test");
    FAIL() << "an NN FP8 key was accepted";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("TN layout"), std::string::npos) << e.what();
  }
  GemmKey both_e5m2 = bf16_decode();
  both_e5m2.op = GemmOp::scaled_gemm;
  both_e5m2.a_type = both_e5m2.b_type = GemmDType::float8_e5m2;
  EXPECT_THROW(both_e5m2.validate("test"), InvalidArgumentError);
}

// What cuBLAS's documentation requires of FP8 GEMMs is checked before cuBLASLt is called, each
// refusal naming the value (Note [FP8 layouts]).
TEST(GemmKey, Fp8KeysMeetCublasltsAlignmentAndOutputRules) {
  GemmKey fp8 = bf16_decode();
  fp8.op = GemmOp::scaled_gemm;
  fp8.a_type = GemmDType::float8_e4m3;
  fp8.b_type = GemmDType::float8_e5m2;
  for (const GemmDType out : {GemmDType::bfloat16, GemmDType::float16, GemmDType::float32}) {
    fp8.c_type = out;
    fp8.validate("test");  // valid: TN, k and every dimension 16-byte multiples, aligned
  }
  const auto refusal = [](GemmKey key) -> std::string {
    try {
      key.validate("test");
    } catch (const InvalidArgumentError& e) {
      return e.what();
    }
    return "accepted";
  };
  GemmKey odd_k = fp8;
  odd_k.k = 4104;  // a multiple of 8, not of 16
  odd_k.lda = odd_k.ldb = 4112;
  EXPECT_NE(refusal(odd_k).find("k to be a multiple of 16 (k is 4104)"), std::string::npos) << refusal(odd_k);
  GemmKey odd_m = fp8;
  odd_m.c_type = GemmDType::bfloat16;
  odd_m.m = odd_m.ldc = 4092;  // 8184 bytes of bfloat16
  EXPECT_NE(refusal(odd_m).find("m and ldc to be multiples of 16 bytes"), std::string::npos) << refusal(odd_m);
  GemmKey fp8_out = fp8;
  fp8_out.c_type = GemmDType::float8_e4m3;
  EXPECT_NE(refusal(fp8_out).find("writes float32, float16 or bfloat16"), std::string::npos) << refusal(fp8_out);
  GemmKey unaligned = fp8;
  unaligned.alignment = 8;
  EXPECT_NE(refusal(unaligned).find("16-byte-aligned A, B and C (their alignment class is 8"), std::string::npos)
      << refusal(unaligned);
}

GemmKey fp8_block() {
  GemmKey key = bf16_decode();
  key.op = GemmOp::scaled_gemm;
  key.a_type = key.b_type = GemmDType::float8_e4m3;
  key.scale_a_mode = ScaleMode::blk128x128;
  key.scale_b_mode = ScaleMode::vec128;
  return key;
}

std::string refusal_of(const GemmKey& key) {
  try {
    key.validate("test");
  } catch (const InvalidArgumentError& e) {
    return e.what();
  }
  return "accepted";
}

// A ScaledGemm's scale modes are part of its key (a block-scaled GEMM runs other kernels), written
// after cudakit's other problem fields and read back.
TEST(GemmKey, ScaleModesRoundTripThroughTheSignature) {
  const GemmKey block = fp8_block();
  EXPECT_NE(block.signature().find("_sc_blk128x128_vec128_ws_"), std::string::npos) << block.signature();
  EXPECT_EQ(GemmKey::parse(block.op_name(), block.signature()), block);
  GemmKey channel = fp8_block();
  channel.scale_a_mode = channel.scale_b_mode = ScaleMode::outer_vec;
  EXPECT_EQ(GemmKey::parse(channel.op_name(), channel.signature()), channel);
  GemmKey scalar = fp8_block();
  scalar.scale_a_mode = scalar.scale_b_mode = ScaleMode::scalar;
  EXPECT_EQ(scalar.signature().find("_sc_"), std::string::npos);  // per-tensor keys read as before
  EXPECT_NE(GemmKeyHash{}(scalar), GemmKeyHash{}(block));
  EXPECT_NE(scalar, block);
  EXPECT_THROW((void)GemmKey::parse(block.op_name(), "tn_4096_16_4096_ld_4096_4096_4096_sc_blk64_vec128_ws_0_al_16_sm_1"),
               InvalidArgumentError);
}

// The pairs and shapes cuBLASLt's block scaling takes (Note [FP8 scale modes]); each refusal says why.
TEST(GemmKey, ScaleModesFollowCublasltsPairsAndShapes) {
  for (const auto& [a, b] : {std::pair{ScaleMode::blk128x128, ScaleMode::vec128}, std::pair{ScaleMode::vec128, ScaleMode::blk128x128},
                             std::pair{ScaleMode::vec128, ScaleMode::vec128}, std::pair{ScaleMode::outer_vec, ScaleMode::outer_vec}}) {
    GemmKey key = fp8_block();
    key.scale_a_mode = a;
    key.scale_b_mode = b;
    EXPECT_EQ(refusal_of(key), "accepted") << scale_mode_name(a) << " x " << scale_mode_name(b);
  }
  GemmKey both_blocks = fp8_block();
  both_blocks.scale_b_mode = ScaleMode::blk128x128;
  EXPECT_NE(refusal_of(both_blocks).find("no 2-D x 2-D block scaling"), std::string::npos) << refusal_of(both_blocks);
  GemmKey mixed = fp8_block();
  mixed.scale_b_mode = ScaleMode::scalar;
  EXPECT_NE(refusal_of(mixed).find("a block scale pairs only with a block scale"), std::string::npos) << refusal_of(mixed);
  GemmKey outer = fp8_block();
  outer.scale_a_mode = ScaleMode::outer_vec;
  outer.scale_b_mode = ScaleMode::scalar;
  EXPECT_NE(refusal_of(outer).find("pairs outer_vec only with outer_vec"), std::string::npos) << refusal_of(outer);
  GemmKey odd_n = fp8_block();
  odd_n.n = 18;
  EXPECT_NE(refusal_of(odd_n).find("m and n to be multiples of 4 (m is 4096, n 18)"), std::string::npos)
      << refusal_of(odd_n);
  GemmKey one_token = fp8_block();  // outer vectors have no such rule: a decode step's one token
  one_token.scale_a_mode = one_token.scale_b_mode = ScaleMode::outer_vec;
  one_token.n = 1;
  EXPECT_EQ(refusal_of(one_token), "accepted");
  GemmKey partial_k = fp8_block();
  partial_k.k = 4096 + 64;
  partial_k.lda = partial_k.ldb = 4160;
  EXPECT_NE(refusal_of(partial_k).find("k to be a multiple of 128 (k is 4160)"), std::string::npos)
      << refusal_of(partial_k);
  GemmKey not_scaled = bf16_decode();
  not_scaled.scale_a_mode = ScaleMode::vec128;
  EXPECT_NE(refusal_of(not_scaled).find("scale modes belong to ScaledGemm"), std::string::npos) << refusal_of(not_scaled);
}

TEST(GemmKey, ScaleSizesFollowTheLayouts) {
  EXPECT_EQ(scale_elements(ScaleMode::scalar, 4096, 7168), 1);
  EXPECT_EQ(scale_elements(ScaleMode::outer_vec, 4096, 7168), 4096);
  EXPECT_EQ(scale_elements(ScaleMode::vec128, 16, 7168), 16 * 56);
  EXPECT_EQ(block_scale_ld(7168), 56);  // DeepSeek-V3's hidden size: no padding
  EXPECT_EQ(block_scale_ld(640), 8);    // 5 blocks, rows padded to 8
  EXPECT_EQ(scale_elements(ScaleMode::blk128x128, 4100, 640), 33 * 8);
}

TEST(GemmKey, ValidateRefusesMixedRulesOfOperations) {
  GemmKey epilogue_without_op = bf16_decode();
  epilogue_without_op.epilogue = Epilogue::relu;
  EXPECT_THROW(epilogue_without_op.validate("test"), InvalidArgumentError);
  GemmKey fp8_in_gemm = bf16_decode();
  fp8_in_gemm.a_type = GemmDType::float8_e4m3;
  EXPECT_THROW(fp8_in_gemm.validate("test"), InvalidArgumentError);
  GemmKey batch_in_gemm = bf16_decode();
  batch_in_gemm.batch = 2;
  EXPECT_THROW(batch_in_gemm.validate("test"), InvalidArgumentError);
  GemmKey overlapping = bf16_decode();
  overlapping.op = GemmOp::gemm_strided_batched;
  overlapping.batch = 2;
  overlapping.stride_c = 100;
  EXPECT_THROW(overlapping.validate("test"), InvalidArgumentError);
  GemmKey tf32_half = bf16_decode();
  tf32_half.tf32 = true;
  EXPECT_THROW(tf32_half.validate("test"), InvalidArgumentError);
}

TEST(GemmKey, AlignmentClassIsTheLargestCommonPowerOfTwo) {
  alignas(512) static char buffer[1024];
  EXPECT_EQ(alignment_class({buffer, buffer + 32}), 32);
  EXPECT_EQ(alignment_class({buffer, buffer + 8}), 8);
  EXPECT_EQ(alignment_class({buffer + 2, buffer + 16}), 2);
  EXPECT_EQ(alignment_class({buffer + 1}), 1);
  EXPECT_EQ(alignment_class({buffer + 128, buffer + 384}), 128);
  // 256 at most (cuBLASLt's largest preference), however aligned the pointers are
  EXPECT_EQ(alignment_class({buffer, buffer + 512}), 256);
  EXPECT_EQ(alignment_class({buffer, nullptr}), 256);
}

TEST(GemmKey, EveryFieldChangesTheKeyAndItsHash) {
  const GemmKey base = bf16_decode();
  std::vector<GemmKey> variants;
  const auto vary = [&](auto change) {
    GemmKey k = base;
    change(k);
    variants.push_back(k);
  };
  vary([](GemmKey& k) { k.transb = 't'; });
  vary([](GemmKey& k) { k.m = 4095; });
  vary([](GemmKey& k) { k.n = 15; });
  vary([](GemmKey& k) { k.k = 4095; });
  vary([](GemmKey& k) { k.lda = 4097; });
  vary([](GemmKey& k) { k.ldb = 4097; });
  vary([](GemmKey& k) { k.ldc = 4097; });
  vary([](GemmKey& k) { k.workspace_bytes = 0; });
  vary([](GemmKey& k) { k.alignment = 8; });
  vary([](GemmKey& k) { k.sm_count = 66; });
  vary([](GemmKey& k) { k.a_type = k.b_type = k.c_type = GemmDType::float16; });
  std::unordered_set<std::size_t> hashes{GemmKeyHash{}(base)};
  for (const GemmKey& v : variants) {
    EXPECT_FALSE(v == base) << v.signature();
    EXPECT_NE(v.signature() + v.op_name(), base.signature() + base.op_name());
    hashes.insert(GemmKeyHash{}(v));
  }
  EXPECT_EQ(hashes.size(), variants.size() + 1);
}

}  // namespace
}  // namespace cudakit::tunable
