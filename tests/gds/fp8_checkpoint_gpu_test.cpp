// FP8 end to end: a checkpoint laid out as FP8 LLM checkpoints are (F8_E4M3 weights with an F32
// per-tensor scale and input scale; or per-block scales in F32 or F8_E8M0) loads onto the GPU
// byte for byte, and its weight and scales go straight into tunable's scaled FP8 GEMM, no
// conversion pass; the layer's output matches float32 within FP8's tolerance.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cudakit/core/device.hpp"
#include "cudakit/gds/safetensors.hpp"
#include "cudakit/tensor/elementwise.hpp"
#include "cudakit/tensor/factories.hpp"
#include "cudakit/tensor/reduction.hpp"
#include "cudakit/tunable/gemm.hpp"
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

double amax(const Tensor& t) {
  double m = 0;
  for (const float v : t.to_vector<float>()) m = std::max(m, static_cast<double>(std::fabs(v)));
  return m;
}

GdsOptions options() {
  GdsOptions o;
  o.page_cache_check = false;
  return o;
}

TEST(Fp8CheckpointGpu, PerTensorScaledLayerRunsOnTheLoadedBytes) {
  CUDAKIT_REQUIRE_GPU();
  if (get_device_capability().first < 9) GTEST_SKIP() << "FP8 GEMMs need compute capability 8.9+";
  constexpr std::int64_t kOut = 256, kIn = 512, kTokens = 32;
  const Tensor w = uniform(kOut, kIn, 1);
  const Tensor x = uniform(kTokens, kIn, 2);
  // Quantized as FP8 checkpoints are: w ~ w_fp8 * weight_scale, weight_scale = amax / 448.
  const double w_scale = amax(w) / 448.0, x_scale = amax(x) / 448.0;
  const Tensor w_fp8 = tensor::div(w, w_scale).to(DType::float8_e4m3fn);
  cudakit::testing::ScratchDir dir;
  const auto path = dir.path() / "fp8.safetensors";
  (void)save_safetensors(path, {{"layer.weight", w_fp8},
                                {"layer.weight_scale", tensor::full({}, w_scale)},
                                {"layer.input_scale", tensor::full({}, x_scale)}});
  const SafetensorsLoad loaded = load_safetensors(path, Device::cuda(0), options());
  const Tensor& weight = loaded.tensors.at("layer.weight");
  const Tensor& weight_scale = loaded.tensors.at("layer.weight_scale");
  const Tensor& input_scale = loaded.tensors.at("layer.input_scale");
  ASSERT_EQ(weight.dtype(), DType::float8_e4m3fn);
  ASSERT_TRUE(weight.device().is_cuda());
  EXPECT_EQ(bytes_of(weight), bytes_of(w_fp8));

  // The activation is quantized per call (FP8 inference does so); the weight is used as loaded.
  const Tensor x_fp8 = tensor::div(x.to(Device::cuda(0)), x_scale).to(DType::float8_e4m3fn);
  Tensor y = tensor::zeros({kTokens, kOut}, {.dtype = DType::float32, .device = Device::cuda(0)});
  // y^T (column-major kOut x kTokens) = W (row-major [out, in], so transa 't') * x^T.
  tunable::GemmArgs g;
  g.key.op = tunable::GemmOp::scaled_gemm;
  g.key.transa = 't';
  g.key.transb = 'n';
  g.key.m = kOut;
  g.key.n = kTokens;
  g.key.k = kIn;
  g.key.lda = kIn;
  g.key.ldb = kIn;
  g.key.ldc = kOut;
  g.key.a_type = tunable::GemmDType::float8_e4m3;
  g.key.b_type = tunable::GemmDType::float8_e4m3;
  g.key.c_type = tunable::GemmDType::float32;
  g.a = weight.data_ptr();
  g.b = x_fp8.data_ptr();
  g.c = y.data_ptr();
  g.scale_a = static_cast<const float*>(weight_scale.data_ptr());
  g.scale_b = static_cast<const float*>(input_scale.data_ptr());
  tunable::gemm(g);
  const std::vector<float> got = y.to_vector<float>();

  // Exactly the FP8 values times their scales, accumulated in float: tight; against float32's unquantized
  // layer: within FP8's tolerance (e4m3 keeps 3 mantissa bits; tunable's check uses
  // 2^-3 for it, See tolerance.cpp).
  const std::vector<double> wq = w_fp8.to_vector<double>(), xq = x_fp8.to_vector<double>();
  const std::vector<float> wf = w.to_vector<float>(), xf = x.to_vector<float>();
  double err_f = 0, norm = 0;
  for (std::int64_t t = 0; t < kTokens; ++t) {
    for (std::int64_t o = 0; o < kOut; ++o) {
      double dequantized = 0, exact = 0, magnitude = 0;
      for (std::int64_t k = 0; k < kIn; ++k) {
        dequantized += wq[o * kIn + k] * w_scale * xq[t * kIn + k] * x_scale;
        exact += static_cast<double>(wf[o * kIn + k]) * xf[t * kIn + k];
        magnitude += std::fabs(static_cast<double>(wf[o * kIn + k]) * xf[t * kIn + k]);
      }
      const double v = got[static_cast<std::size_t>(t * kOut + o)];
      EXPECT_LE(std::fabs(v - dequantized), 1e-3 * magnitude + 1e-6) << "token " << t << ", output " << o;
      err_f += (v - exact) * (v - exact);
      norm += exact * exact;
    }
  }
  EXPECT_LE(std::sqrt(err_f / norm), std::ldexp(1.0, -3));
  EXPECT_GT(std::sqrt(err_f / norm), 0.0);  // FP8 did round: the check above is not vacuous
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

}  // namespace
}  // namespace cudakit::gds
