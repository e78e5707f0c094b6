// FP8 end to end: a checkpoint laid out as FP8 LLM checkpoints are (F8_E4M3 weights with F32
// scales per tensor, per channel or per 128x128 block, or E8M0 MX scales) loads onto the GPU byte
// for byte, is recognised (tunable::fp8_linear), and its weight and scales go straight into
// tunable's scaled FP8 GEMM, no conversion pass; the layer's output matches the dequantized
// reference, and float32 within FP8's tolerance.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "cudakit/core/device.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/gds/safetensors.hpp"
#include "cudakit/tensor/elementwise.hpp"
#include "cudakit/tensor/factories.hpp"
#include "cudakit/tunable/fp8_linear.hpp"
#include "cudakit/tunable/tunable.hpp"
#include "support/gpu_test.hpp"
#include "support/scratch_dir.hpp"

namespace cudakit::gds {
namespace {

using tensor::Device;
using tensor::DType;
using tensor::Tensor;

Tensor uniform(std::int64_t rows, std::int64_t cols, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::vector<float> v(static_cast<std::size_t>(rows * cols));
  for (float& x : v) x = value(rng);
  return tensor::from_host(v, {rows, cols});
}

std::string bytes_of(const Tensor& t) {
  const Tensor host = t.to_host();
  return std::string(static_cast<const char*>(host.data_ptr()), host.nbytes());
}

GdsOptions options() {
  GdsOptions o;
  o.page_cache_check = false;
  return o;
}

TEST(Fp8CheckpointGpu, BlockScaledLayoutsLoadByteForByte) {
  CUDAKIT_REQUIRE_GPU();
  // DeepSeek-style: 128x128 blocks with F32 inverse scales; OCP MX: 32-value blocks with E8M0.
  constexpr std::int64_t kOut = 256, kIn = 256;
  const Tensor w = uniform(kOut, kIn, 3);
  std::vector<float> block_scales(4);
  std::vector<std::uint8_t> mx_scales(static_cast<std::size_t>(kOut * kIn / 32));
  for (std::size_t i = 0; i < mx_scales.size(); ++i) mx_scales[i] = static_cast<std::uint8_t>(120 + i % 9);
  for (std::size_t i = 0; i < block_scales.size(); ++i) block_scales[i] = 0.001f * static_cast<float>(i + 1);
  const Tensor w_fp8 = tensor::mul(w, 400.0).to(DType::float8_e4m3fn);
  const Tensor f32_scales = tensor::from_host(block_scales, {2, 2});
  const Tensor e8m0_scales = tensor::from_host(mx_scales.data(), {kOut, kIn / 32}, DType::uint8).view_as(DType::float8_e8m0fnu);
  cudakit::testing::ScratchDir dir;
  const auto path = dir.path() / "blocks.safetensors";
  (void)save_safetensors(path, {{"w", w_fp8}, {"w.weight_scale_inv", f32_scales}, {"w.mx_scale", e8m0_scales}});
  const SafetensorsLoad loaded = load_safetensors(path, Device::cuda(0), options());
  EXPECT_EQ(bytes_of(loaded.tensors.at("w")), bytes_of(w_fp8));
  EXPECT_EQ(bytes_of(loaded.tensors.at("w.weight_scale_inv")), bytes_of(f32_scales));
  EXPECT_EQ(loaded.tensors.at("w.mx_scale").dtype(), DType::float8_e8m0fnu);
  EXPECT_EQ(bytes_of(loaded.tensors.at("w.mx_scale")), bytes_of(e8m0_scales));
  // The E8M0 scales decode on the device to their powers of two.
  const std::vector<float> decoded = loaded.tensors.at("w.mx_scale").to(DType::float32).to_vector<float>();
  for (std::size_t i = 0; i < decoded.size(); ++i) {
    ASSERT_EQ(decoded[i], std::ldexp(1.0f, static_cast<int>(mx_scales[i]) - 127)) << i;
  }
}

// ---- Scaled layers: per tensor, per channel, 128x128 blocks, MX -------------------------------

// cuBLASLt runs FP8 GEMMs with outer-vector and block scales (CUBLASLT_MATMUL_MATRIX_SCALE_
// OUTER_VEC_32F, VEC128_32F, BLK128x128_32F) on compute capability 9.x only: not on 8.9, whose
// FP8 GEMMs take per-tensor scales, nor on 10.x and 12.x, whose block scaling is the MX and NVFP4
// modes (torch's _scaled_mm refuses its 1x128 and 128x128 scaling outside 9.x too).
constexpr const char* kScaleModesSkip =
    "cuBLASLt's outer-vector and block FP8 scales run on compute capability 9.x";
bool scale_modes_run_here() { return get_device_capability().first == 9; }

// Values of `rows` x `cols` quantized to e4m3 in groups of `group_rows` x `group_cols` (a whole
// dimension where the group spans it), each group scaled so that its amax maps to 448, as FP8
// checkpoints and activation quantizers do. Returns the FP8 tensor and the scales, row-major
// [ceil(rows / group_rows), ceil(cols / group_cols)].
struct Quantized {
  Tensor fp8;                 // on the host
  std::vector<float> scales;  // row-major over the groups
  std::int64_t group_rows, group_cols, scale_cols;
  [[nodiscard]] double scale_at(std::int64_t r, std::int64_t c) const {
    return scales[static_cast<std::size_t>((r / group_rows) * scale_cols + c / group_cols)];
  }
};

Quantized quantize(const std::vector<float>& v, std::int64_t rows, std::int64_t cols, std::int64_t group_rows,
                   std::int64_t group_cols) {
  Quantized q{.group_rows = group_rows, .group_cols = group_cols, .scale_cols = (cols + group_cols - 1) / group_cols};
  const std::int64_t scale_rows = (rows + group_rows - 1) / group_rows;
  q.scales.assign(static_cast<std::size_t>(scale_rows * q.scale_cols), 0.0f);
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < cols; ++c) {
      float& s = q.scales[static_cast<std::size_t>((r / group_rows) * q.scale_cols + c / group_cols)];
      s = std::max(s, std::fabs(v[static_cast<std::size_t>(r * cols + c)]) / 448.0f);
    }
  }
  std::vector<float> scaled(v.size());
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < cols; ++c) {
      scaled[static_cast<std::size_t>(r * cols + c)] =
          v[static_cast<std::size_t>(r * cols + c)] / static_cast<float>(q.scale_at(r, c));
    }
  }
  q.fp8 = tensor::from_host(scaled, {rows, cols}).to(DType::float8_e4m3fn);
  return q;
}

// Per-token 1x128 scales as cuBLASLt reads them: [tokens, groups] with tokens contiguous, the
// transpose of a contiguous [groups, tokens] (quantize() writes them [tokens, groups] row-major).
Tensor token_group_scales(const Quantized& xq, std::int64_t tokens) {
  std::vector<float> by_group(xq.scales.size());
  for (std::int64_t t = 0; t < tokens; ++t) {
    for (std::int64_t g = 0; g < xq.scale_cols; ++g) {
      by_group[static_cast<std::size_t>(g * tokens + t)] = xq.scales[static_cast<std::size_t>(t * xq.scale_cols + g)];
    }
  }
  return tensor::from_host(by_group, {xq.scale_cols, tokens}, Device::cuda(0)).t();
}

std::vector<float> values(std::int64_t rows, std::int64_t cols, unsigned seed) {
  return uniform(rows, cols, seed).to_vector<float>();
}

enum class Scheme { per_tensor, per_channel, block };

// One layer of `scheme` saved as its checkpoint would be, loaded onto the GPU, recognised and run
// on activations quantized as the layer asks; the output checked against float32 products of the
// dequantized weights and activations (tight: only summation order differs) and against the
// unquantized layer (FP8's tolerance).
void check_layer(Scheme scheme, std::int64_t out, std::int64_t in, std::int64_t tokens, DType out_dtype) {
  SCOPED_TRACE(::testing::Message() << "scheme " << static_cast<int>(scheme) << ", [" << out << ", " << in << "] x "
                                    << tokens << " tokens, " << tensor::dtype_name(out_dtype));
  const std::vector<float> w = values(out, in, 11), x = values(tokens, in, 12);
  const Quantized wq = scheme == Scheme::per_tensor    ? quantize(w, out, in, out, in)
                       : scheme == Scheme::per_channel ? quantize(w, out, in, 1, in)
                                                       : quantize(w, out, in, 128, 128);
  const Quantized xq = scheme == Scheme::per_tensor    ? quantize(x, tokens, in, tokens, in)
                       : scheme == Scheme::per_channel ? quantize(x, tokens, in, 1, in)
                                                       : quantize(x, tokens, in, 1, 128);
  std::map<std::string, Tensor> file{{"layer.weight", wq.fp8}};
  switch (scheme) {
    case Scheme::per_tensor:
      file.emplace("layer.weight_scale", tensor::full({}, wq.scales[0]));
      file.emplace("layer.input_scale", tensor::full({}, xq.scales[0]));
      break;
    case Scheme::per_channel: file.emplace("layer.weight_scale", tensor::from_host(wq.scales, {out, 1})); break;
    case Scheme::block:
      file.emplace("layer.weight_scale_inv", tensor::from_host(wq.scales, {(out + 127) / 128, wq.scale_cols}));
      break;
  }
  cudakit::testing::ScratchDir dir;
  const auto path = dir.path() / "layer.safetensors";
  (void)save_safetensors(path, file);
  const SafetensorsLoad loaded = load_safetensors(path, Device::cuda(0), options());
  const tunable::Fp8Linear layer = tunable::fp8_linear(loaded.tensors, "layer");
  EXPECT_EQ(layer.weight.data_ptr(), loaded.tensors.at("layer.weight").data_ptr());  // no conversion pass
  ASSERT_TRUE(layer.weight.device().is_cuda());
  EXPECT_EQ(bytes_of(layer.weight), bytes_of(wq.fp8));

  // The activations' scale in the layout the layer's mode reads.
  Tensor x_scale;
  switch (layer.activation_mode()) {
    case tunable::ScaleMode::scalar: x_scale = *layer.input_scale; break;
    case tunable::ScaleMode::outer_vec: x_scale = tensor::from_host(xq.scales, Device::cuda(0)); break;
    default: x_scale = token_group_scales(xq, tokens);
  }
  const Tensor x_fp8 = xq.fp8.to(Device::cuda(0));
  Tensor y = tensor::zeros({tokens, out}, {.dtype = out_dtype, .device = Device::cuda(0)});
  tunable::fp8_linear_forward(layer, x_fp8, x_scale, y);
  const std::vector<float> got = y.to(DType::float32).to_vector<float>();

  const std::vector<double> wv = wq.fp8.to_vector<double>(), xv = xq.fp8.to_vector<double>();
  // bfloat16's rounding of the output on top of float32's summation.
  const double output_rounding = out_dtype == DType::bfloat16 ? std::ldexp(1.0, -8) : 0.0;
  double err = 0, norm = 0;
  for (std::int64_t t = 0; t < tokens; ++t) {
    for (std::int64_t o = 0; o < out; ++o) {
      double dequantized = 0, exact = 0, magnitude = 0;
      for (std::int64_t k = 0; k < in; ++k) {
        const double term = wv[static_cast<std::size_t>(o * in + k)] * wq.scale_at(o, k) *
                            xv[static_cast<std::size_t>(t * in + k)] * xq.scale_at(t, k);
        dequantized += term;
        magnitude += std::fabs(term);
        exact += static_cast<double>(w[static_cast<std::size_t>(o * in + k)]) * x[static_cast<std::size_t>(t * in + k)];
      }
      const double v = got[static_cast<std::size_t>(t * out + o)];
      ASSERT_LE(std::fabs(v - dequantized), (1e-4 + output_rounding) * magnitude + 1e-6)
          << "token " << t << ", output " << o << ": " << v << " against " << dequantized;
      err += (v - exact) * (v - exact);
      norm += exact * exact;
    }
  }
  EXPECT_LE(std::sqrt(err / norm), std::ldexp(1.0, -3));  // FP8's tolerance, as the per-tensor test's
  EXPECT_GT(std::sqrt(err / norm), 0.0);
}

TEST(Fp8CheckpointGpu, ScaledLayersMatchTheirDequantizedReference) {
  CUDAKIT_REQUIRE_GPU();
  if (!scale_modes_run_here()) GTEST_SKIP() << kScaleModesSkip;
  check_layer(Scheme::per_tensor, 256, 512, 32, DType::float32);
  check_layer(Scheme::per_channel, 256, 512, 32, DType::float32);
  check_layer(Scheme::per_channel, 256, 512, 32, DType::bfloat16);
  check_layer(Scheme::block, 256, 512, 32, DType::float32);
  check_layer(Scheme::block, 256, 512, 32, DType::bfloat16);
  // Rows and tokens that are not multiples of 128: the scales' partial blocks (ceil) are laid out,
  // the weight is not padded. in = 640: 5 k-blocks, the block scale copied to cuBLASLt's stride 8.
  check_layer(Scheme::block, 320, 640, 36, DType::float32);
  check_layer(Scheme::per_channel, 320, 640, 36, DType::float32);
  // A decode step: one token (block scales: padded to four rows inside fp8_linear_forward), and 5.
  check_layer(Scheme::block, 256, 512, 1, DType::bfloat16);
  check_layer(Scheme::block, 256, 512, 5, DType::float32);
  check_layer(Scheme::per_channel, 256, 512, 1, DType::bfloat16);
  check_layer(Scheme::per_tensor, 256, 512, 1, DType::bfloat16);
}

// With TunableOp tuning: the tuner times the scaled keys with scales of their modes' sizes (its
// candidates checked against Default), and the solution it picks gives the same layer outputs.
TEST(Fp8CheckpointGpu, TunedScaledLayersMatchToo) {
  CUDAKIT_REQUIRE_GPU();
  if (!scale_modes_run_here()) GTEST_SKIP() << kScaleModesSkip;
  struct Restore {
    tunable::TuningOptions saved = tunable::options();
    ~Restore() {
      tunable::clear_results();
      tunable::set_options(saved);
    }
  } restore;
  tunable::TuningOptions o = restore.saved;
  o.enabled = true;
  o.tuning = true;
  o.filename = "";
  o.max_shape_tuning_ms = 300;
  tunable::set_options(o);
  tunable::clear_results();
  check_layer(Scheme::block, 256, 512, 32, DType::bfloat16);
  check_layer(Scheme::per_channel, 256, 512, 32, DType::bfloat16);
  check_layer(Scheme::per_tensor, 256, 512, 32, DType::bfloat16);
}

// A k that is not a multiple of 128 is refused for block scales (Note [FP8 scale modes]), before
// cuBLASLt is called and with the value named; per-channel scales take it.
TEST(Fp8CheckpointGpu, BlockScalesRefuseAPartialKBlock) {
  CUDAKIT_REQUIRE_GPU();
  if (!scale_modes_run_here()) GTEST_SKIP() << kScaleModesSkip;
  const std::vector<float> w = values(256, 320, 5);
  const Quantized wq = quantize(w, 256, 320, 128, 128);
  const std::map<std::string, Tensor> tensors{
      {"p.weight", wq.fp8.to(Device::cuda(0))},
      {"p.weight_scale_inv", tensor::from_host(wq.scales, {2, 3}, Device::cuda(0))}};
  const tunable::Fp8Linear layer = tunable::fp8_linear(tensors, "p");
  const Tensor x = tensor::zeros({16, 320}, {.dtype = DType::float8_e4m3fn, .device = Device::cuda(0)});
  Tensor y = tensor::zeros({16, 256}, {.dtype = DType::float32, .device = Device::cuda(0)});
  const Tensor x_scale = tensor::full({3, 16}, 1.0, {.device = Device::cuda(0)}).t();
  try {
    tunable::fp8_linear_forward(layer, x, x_scale, y);
    FAIL() << "k = 320 with 128x128 block scales was accepted";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("need k to be a multiple of 128 (k is 320)"), std::string::npos) << e.what();
  }
  check_layer(Scheme::per_channel, 256, 320, 16, DType::float32);
}

// Activations, their scale or the output on another device than the weight (here the host) are
// refused before cuBLASLt is handed their pointers, which it would read or write on the GPU.
TEST(Fp8CheckpointGpu, OperandsOffTheWeightsDeviceAreRefused) {
  CUDAKIT_REQUIRE_GPU();
  if (!scale_modes_run_here()) GTEST_SKIP() << kScaleModesSkip;
  const std::map<std::string, Tensor> tensors{
      {"p.weight", tensor::zeros({256, 256}, {.dtype = DType::float8_e4m3fn, .device = Device::cuda(0)})},
      {"p.weight_scale", tensor::full({256}, 1.0, {.device = Device::cuda(0)})}};
  const tunable::Fp8Linear layer = tunable::fp8_linear(tensors, "p");
  const Tensor x = tensor::zeros({16, 256}, {.dtype = DType::float8_e4m3fn, .device = Device::cuda(0)});
  const Tensor x_scale = tensor::full({16}, 1.0, {.device = Device::cuda(0)});
  Tensor y = tensor::zeros({16, 256}, {.dtype = DType::float32, .device = Device::cuda(0)});
  Tensor host_y = tensor::zeros({16, 256});
  const auto refusal = [&](const Tensor& xs, const Tensor& scale, Tensor& out) -> std::string {
    try {
      tunable::fp8_linear_forward(layer, xs, scale, out);
    } catch (const InvalidArgumentError& e) {
      return e.what();
    }
    return "accepted";
  };
  EXPECT_NE(refusal(x, tensor::full({16}, 1.0), y).find("x_scale is on cpu, the layer's weight on cuda:0"),
            std::string::npos);
  EXPECT_NE(refusal(x.to(Device::cpu()), x_scale, y).find("x is on cpu, the layer's weight on cuda:0"),
            std::string::npos);
  EXPECT_NE(refusal(x, x_scale, host_y).find("y is on cpu, the layer's weight on cuda:0"), std::string::npos);
  tunable::fp8_linear_forward(layer, x, x_scale, y);  // on one device: runs
  EXPECT_EQ(y.to_vector<float>(), std::vector<float>(16 * 256, 0.0f));
}

// OCP MX scales whose four 32-weight scales agree in each 128 run as vec128 x vec128: the
// checkpoint's E8M0 codes become float32 powers of two, the weights stay as loaded.
TEST(Fp8CheckpointGpu, MxScalesThatAgreePer128RunAsVec128) {
  CUDAKIT_REQUIRE_GPU();
  if (!scale_modes_run_here()) GTEST_SKIP() << kScaleModesSkip;
  constexpr std::int64_t kOut = 128, kIn = 256, kTokens = 16;
  const std::vector<float> w = values(kOut, kIn, 7), x = values(kTokens, kIn, 8);
  std::vector<std::uint8_t> codes(static_cast<std::size_t>(kOut * kIn / 32));
  std::vector<float> w_scaled(w.size());
  for (std::int64_t r = 0; r < kOut; ++r) {
    for (std::int64_t c = 0; c < kIn; ++c) {
      const int code = 127 - 9 + static_cast<int>((r + c / 128) % 3);  // 2^-9 .. 2^-7 per 128 weights
      codes[static_cast<std::size_t>(r * (kIn / 32) + c / 32)] = static_cast<std::uint8_t>(code);
      w_scaled[static_cast<std::size_t>(r * kIn + c)] = w[static_cast<std::size_t>(r * kIn + c)] * 256.0f;
    }
  }
  const Tensor w_fp8 = tensor::from_host(w_scaled, {kOut, kIn}).to(DType::float8_e4m3fn);
  const std::map<std::string, Tensor> tensors{
      {"mx.weight", w_fp8.to(Device::cuda(0))},
      {"mx.weight_scale", tensor::from_host(codes.data(), {kOut, kIn / 32}, DType::uint8, Device::cuda(0))
                              .view_as(DType::float8_e8m0fnu)}};
  const tunable::Fp8Linear layer = tunable::fp8_linear(tensors, "mx");
  ASSERT_EQ(layer.weight_mode(), tunable::ScaleMode::vec128);
  const Quantized xq = quantize(x, kTokens, kIn, 1, 128);
  Tensor y = tensor::zeros({kTokens, kOut}, {.dtype = DType::float32, .device = Device::cuda(0)});
  tunable::fp8_linear_forward(layer, xq.fp8.to(Device::cuda(0)), token_group_scales(xq, kTokens), y);
  const std::vector<float> got = y.to_vector<float>();
  const std::vector<double> wv = w_fp8.to_vector<double>(), xv = xq.fp8.to_vector<double>();
  for (std::int64_t t = 0; t < kTokens; ++t) {
    for (std::int64_t o = 0; o < kOut; ++o) {
      double expected = 0, magnitude = 0;
      for (std::int64_t k = 0; k < kIn; ++k) {
        const double w_scale = std::ldexp(1.0, codes[static_cast<std::size_t>(o * (kIn / 32) + k / 32)] - 127);
        const double term = wv[static_cast<std::size_t>(o * kIn + k)] * w_scale * xv[static_cast<std::size_t>(t * kIn + k)] *
                            xq.scale_at(t, k);
        expected += term;
        magnitude += std::fabs(term);
      }
      ASSERT_LE(std::fabs(got[static_cast<std::size_t>(t * kOut + o)] - expected), 1e-4 * magnitude + 1e-6)
          << "token " << t << ", output " << o;
    }
  }
}

}  // namespace
}  // namespace cudakit::gds
