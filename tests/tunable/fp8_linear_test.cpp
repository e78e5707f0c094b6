// FP8 checkpoint layers recognised from their tensors' names, dtypes and shapes (host tensors: no
// GPU needed), their scales brought to cuBLASLt's layouts, and every layout that fits none refused
// with the shapes that would.
#include "cudakit/tunable/fp8_linear.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "cudakit/core/error.hpp"
#include "cudakit/tensor/factories.hpp"

namespace cudakit::tunable {
namespace {

using tensor::DType;
using tensor::Tensor;
using Tensors = std::map<std::string, Tensor>;

Tensor fp8(std::int64_t out, std::int64_t in) { return tensor::zeros({out, in}, {.dtype = DType::float8_e4m3fn}); }

Tensor floats(const tensor::Shape& shape, float first = 1.0f) {
  std::vector<float> v(static_cast<std::size_t>(tensor::shape_numel(shape)));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = first + static_cast<float>(i);
  return tensor::from_host(v, shape);
}

Tensor e8m0(std::int64_t rows, std::int64_t cols, const std::vector<std::uint8_t>& codes) {
  return tensor::from_host(codes.data(), {rows, cols}, DType::uint8).view_as(DType::float8_e8m0fnu);
}

std::string refusal(const Tensors& tensors, const std::string& prefix) {
  try {
    (void)fp8_linear(tensors, prefix);
  } catch (const InvalidArgumentError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(Fp8Linear, FindsEveryFp8WeightByItsName) {
  const Tensors t{{"a.weight", fp8(256, 256)},
                  {"a.weight_scale", floats({})},
                  {"b.weight", tensor::zeros({4, 4})},  // float32: not an FP8 layer
                  {"c.weight", tensor::zeros({256, 256}, {.dtype = DType::float8_e5m2})},
                  {"norm.weight", tensor::zeros({256}, {.dtype = DType::float8_e4m3fn})}};  // 1-D: not a linear
  EXPECT_EQ(fp8_linear_prefixes(t), (std::vector<std::string>{"a", "c"}));
}

TEST(Fp8Linear, RecognisesPerTensorAndPerChannelScales) {
  const Tensors t{{"q.weight", fp8(256, 512)}, {"q.weight_scale", floats({1}, 0.5f)}, {"q.input_scale", floats({}, 0.25f)},
                  {"k.weight", fp8(256, 512)}, {"k.weight_scale", floats({256, 1})},
                  {"v.weight", fp8(256, 512)}, {"v.weight_scale", floats({256}).to(DType::bfloat16)}};
  const Fp8Linear q = fp8_linear(t, "q");
  EXPECT_EQ(q.scaling, Fp8WeightScaling::per_tensor);
  EXPECT_EQ(q.weight_mode(), ScaleMode::scalar);
  EXPECT_EQ(q.activation_mode(), ScaleMode::scalar);
  EXPECT_EQ(q.weight_scale.to_vector<float>(), std::vector<float>{0.5f});
  ASSERT_TRUE(q.input_scale.has_value());
  EXPECT_EQ(q.input_scale->to_vector<float>(), std::vector<float>{0.25f});
  EXPECT_EQ(q.out_features, 256);
  EXPECT_EQ(q.in_features, 512);
  EXPECT_EQ(q.weight.data_ptr(), t.at("q.weight").data_ptr());  // the checkpoint's bytes, not a copy

  const Fp8Linear k = fp8_linear(t, "k");
  EXPECT_EQ(k.scaling, Fp8WeightScaling::per_channel);
  EXPECT_EQ(k.weight_mode(), ScaleMode::outer_vec);
  EXPECT_EQ(k.activation_mode(), ScaleMode::outer_vec);
  EXPECT_EQ(k.weight_scale.sizes(), (tensor::Shape{256}));
  EXPECT_EQ(k.weight_scale.data_ptr(), t.at("k.weight_scale").data_ptr());  // float32 [out, 1] used in place
  EXPECT_FALSE(k.input_scale.has_value());

  const Fp8Linear v = fp8_linear(t, "v");  // bfloat16 scales become float32 (exact here)
  EXPECT_EQ(v.weight_scale.dtype(), DType::float32);
  EXPECT_EQ(v.weight_scale.to_vector<float>(), floats({256}).to_vector<float>());
}

TEST(Fp8Linear, BlockScalesKeepTheCheckpointsLayoutOrArePaddedToCublasltsStride) {
  // DeepSeek-V3's kv_a_proj: [576, 7168] with [5, 56] block scales; 56 is a multiple of 4.
  const Tensors t{{"kv.weight", fp8(576, 7168)}, {"kv.weight_scale_inv", floats({5, 56})},
                  // in = 640: 5 k-blocks per row, cuBLASLt's rows are 8 apart.
                  {"odd.weight", fp8(300, 640)}, {"odd.weight_scale_inv", floats({3, 5})}};
  const Fp8Linear kv = fp8_linear(t, "kv");
  EXPECT_EQ(kv.scaling, Fp8WeightScaling::block_128x128);
  EXPECT_EQ(kv.weight_mode(), ScaleMode::blk128x128);
  EXPECT_EQ(kv.activation_mode(), ScaleMode::vec128);
  EXPECT_EQ(kv.weight_scale.data_ptr(), t.at("kv.weight_scale_inv").data_ptr());

  const Fp8Linear odd = fp8_linear(t, "odd");
  ASSERT_EQ(odd.weight_scale.sizes(), (tensor::Shape{3, 8}));
  const std::vector<float> padded = odd.weight_scale.to_vector<float>();
  const std::vector<float> original = t.at("odd.weight_scale_inv").to_vector<float>();
  for (int r = 0; r < 3; ++r) {
    for (int b = 0; b < 5; ++b) EXPECT_EQ(padded[r * 8 + b], original[r * 5 + b]) << r << ", " << b;
  }
}

TEST(Fp8Linear, MxScalesBecomeVec128WhereTheyAgreeAndAreRefusedWhereNot) {
  // [4, 256]: 8 MX groups per row; each 128 weights' four codes equal.
  std::vector<std::uint8_t> agree(4 * 8);
  for (std::size_t i = 0; i < agree.size(); ++i) agree[i] = static_cast<std::uint8_t>(120 + (i % 8) / 4 + 2 * (i / 8));
  std::vector<std::uint8_t> differ = agree;
  differ[2 * 8 + 5] = 100;  // row 2, columns 160-191
  const Tensors t{{"mx.weight", fp8(4, 256)}, {"mx.weight_scale", e8m0(4, 8, agree)},
                  {"bad.weight", fp8(4, 256)}, {"bad.weight_scale", e8m0(4, 8, differ)}};
  const Fp8Linear mx = fp8_linear(t, "mx");
  EXPECT_EQ(mx.scaling, Fp8WeightScaling::mx_32);
  EXPECT_EQ(mx.weight_mode(), ScaleMode::vec128);
  EXPECT_EQ(mx.activation_mode(), ScaleMode::vec128);
  ASSERT_EQ(mx.weight_scale.sizes(), (tensor::Shape{2, 4}));  // [k-blocks, rows]: rows contiguous
  const std::vector<float> v = mx.weight_scale.to_vector<float>();
  for (int r = 0; r < 4; ++r) {
    for (int b = 0; b < 2; ++b) {
      EXPECT_EQ(v[b * 4 + r], std::ldexp(1.0f, agree[r * 8 + b * 4] - 127)) << r << ", " << b;
    }
  }
  const std::string why = refusal(t, "bad");
  EXPECT_NE(why.find("layer \"bad\": \"bad.weight_scale\" is float8_e8m0fnu [4, 8], the OCP MX layout"),
            std::string::npos) << why;
  EXPECT_NE(why.find("(row 2, columns 128-255)"), std::string::npos) << why;
  EXPECT_NE(why.find("on the host"), std::string::npos) << why;
  EXPECT_NE(why.find("VEC32_UE8M0"), std::string::npos) << why;
}

TEST(Fp8Linear, InconsistentLayoutsAreRefusedWithTheShapesThatWouldFit) {
  const Tensors t{{"none.weight", fp8(256, 256)},
                  {"both.weight", fp8(256, 256)}, {"both.weight_scale", floats({})}, {"both.weight_scale_inv", floats({})},
                  {"shape.weight", fp8(256, 384)}, {"shape.weight_scale_inv", floats({3, 2})},
                  {"dtype.weight", fp8(256, 256)}, {"dtype.weight_scale", tensor::zeros({}, {.dtype = DType::int32})},
                  {"input.weight", fp8(256, 256)}, {"input.weight_scale", floats({})}, {"input.input_scale", floats({2})},
                  {"notfp8.weight", tensor::zeros({8, 8}, {.dtype = DType::bfloat16})}, {"notfp8.weight_scale", floats({})},
                  {"mxshape.weight", fp8(4, 256)}, {"mxshape.weight_scale", e8m0(4, 4, std::vector<std::uint8_t>(16, 127))}};
  EXPECT_NE(refusal(t, "missing").find("layer \"missing\": no tensor \"missing.weight\""), std::string::npos);
  EXPECT_NE(refusal(t, "none").find("its FP8 weight has no scale (\"none.weight_scale_inv\" or \"none.weight_scale\")"),
            std::string::npos) << refusal(t, "none");
  EXPECT_NE(refusal(t, "both").find("has both"), std::string::npos) << refusal(t, "both");
  const std::string shape = refusal(t, "shape");
  EXPECT_NE(shape.find("\"shape.weight_scale_inv\" is float32 [3, 2], which fits no FP8 layout of a [256, 384] weight"),
            std::string::npos) << shape;
  EXPECT_NE(shape.find("[2, 3] (128x128 blocks)"), std::string::npos) << shape;
  EXPECT_NE(shape.find("[256] or [256, 1] (per channel)"), std::string::npos) << shape;
  EXPECT_NE(refusal(t, "dtype").find("is int32 []; FP8 scales are float32"), std::string::npos) << refusal(t, "dtype");
  EXPECT_NE(refusal(t, "input").find("\"input.input_scale\" is float32 [2]; a static activation scale is one float"),
            std::string::npos) << refusal(t, "input");
  EXPECT_NE(refusal(t, "notfp8").find("\"notfp8.weight\" is bfloat16 [8, 8]; an FP8 layer's weight is"),
            std::string::npos) << refusal(t, "notfp8");
  EXPECT_NE(refusal(t, "mxshape").find("float8_e8m0fnu [4, 8] (MX, 32-weight blocks)"), std::string::npos)
      << refusal(t, "mxshape");
}

TEST(Fp8Linear, ForwardRefusesActivationsInTheWrongLayoutBeforeAnyGpuWork) {
  const Tensors t{{"w.weight", fp8(256, 256)}, {"w.weight_scale_inv", floats({2, 2})}};
  const Fp8Linear layer = fp8_linear(t, "w");
  const Tensor x = fp8(8, 256);
  Tensor y = tensor::zeros({8, 256});
  const auto refusal_of = [&](const Tensor& scale) -> std::string {
    try {
      fp8_linear_forward(layer, x, scale, y);
    } catch (const InvalidArgumentError& e) {
      return e.what();
    }
    return "accepted";
  };
  // [tokens, groups] row-major (an act_quant's own layout) is the transpose of what cuBLASLt reads.
  const std::string row_major = refusal_of(floats({8, 2}));
  EXPECT_NE(row_major.find("a block_128x128 layer takes activations scaled per token in 1x128 groups: [8, 2] with "
                           "strides (1, 8) (tokens contiguous)"),
            std::string::npos) << row_major;
  EXPECT_NE(refusal_of(floats({})).find("x_scale is float32 []"), std::string::npos);
  Tensor wrong_y = tensor::zeros({8, 128});
  try {
    fp8_linear_forward(layer, x, floats({2, 8}).t(), wrong_y);
    FAIL() << "a [8, 128] output of a [256, 256] layer was accepted";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("y is float32 [8, 128]; expected contiguous float32, bfloat16 or float16 [8, 256]"),
              std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace cudakit::tunable
