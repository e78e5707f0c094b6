#include "cudakit/tunable/fp8_linear.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/device.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/tensor/factories.hpp"
#include "cudakit/tunable/gemm.hpp"

namespace cudakit::tunable {

// Note [FP8 checkpoint layers]
// FP8 checkpoints store each linear layer's weight as float8 [out, in] with a float32 scale that
// multiplies it back (w = w_fp8 * scale), named and shaped by the scheme that made it:
// DeepSeek-V3 and Qwen3-FP8 "weight_scale_inv" per 128x128 block; compressed-tensors and FBGEMM
// "weight_scale" per tensor or per output channel, often with a static "input_scale"; OCP MX
// checkpoints an E8M0 power of two per 32 weights along `in`. The layer is recognised from the
// scale's name, dtype and shape alone (a block scale and a per-tensor one are told apart by
// rank: a [1, 1] block scale of a layer of at most 128 x 128 is the per-tensor case anyway), and
// every shape that fits none of them is refused with the shapes that would fit.
// The weight goes to cuBLASLt as it lies: a row-major [out, in] weight is the TN GEMM's A (m =
// out, K-major), so the checkpoint's layouts are cuBLASLt's (Note [FP8 scale modes] in
// gemm_key.cpp) but for two: a block scale whose ceil(in / 128) is not a multiple of 4 is copied
// to the padded row stride cuBLASLt reads, and an MX scale becomes a float32 vec128 scale (one
// per 128 weights of a row, rows contiguous) when its four 32-weight scales in each 128 agree -
// the same numbers in a layout Hopper runs. When they differ no Hopper layout equals it and the
// layer is refused, naming the device: cuBLASLt's 32-element mode (VEC32_UE8M0) is Blackwell's,
// with a swizzled scale layout this code does not write, and converting the weights is what
// this path exists to avoid. Scales stored as bfloat16 or float16 are converted to float32 (a
// few floats); a scale tensor that is not 16-byte aligned is copied to one that is.
namespace {

using cudakit::detail::concat;
using tensor::DType;
using tensor::Tensor;
constexpr const char* kApi = "tunable::fp8_linear";

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

std::string describe(const Tensor& t) {
  return concat(tensor::dtype_name(t.dtype()), " ", t.shape_string());
}

bool aligned(const Tensor& t) {
  return reinterpret_cast<std::uintptr_t>(t.data_ptr()) % kScaleAlignment == 0;
}

// `t`'s float32 values (contiguous, row-major) on `device`, aligned, as `shape`: `t` itself when it
// already is that.
Tensor float32_scale(const Tensor& t, const tensor::Shape& shape, tensor::Device device, OptionalStream stream) {
  Tensor s = t.dtype() == DType::float32 ? t : t.to(DType::float32, stream);
  if (!s.is_contiguous()) s = s.contiguous(stream);
  s = s.view(shape);
  if (!aligned(s)) s = tensor::from_host(s.to_vector<float>(stream), shape, device, stream);
  return s;
}

std::string where(const Tensor& t) {
  if (!t.device().is_cuda()) return "the host (the tensors are not on a GPU)";
  const DeviceProperties p = get_device_properties(t.device().index);
  return concat(p.name, " (GPU ", p.index, ", compute capability ", p.major, ".", p.minor, ")");
}

}  // namespace

std::string_view fp8_weight_scaling_name(Fp8WeightScaling scaling) noexcept {
  switch (scaling) {
    case Fp8WeightScaling::per_tensor: return "per_tensor";
    case Fp8WeightScaling::per_channel: return "per_channel";
    case Fp8WeightScaling::block_128x128: return "block_128x128";
    case Fp8WeightScaling::mx_32: return "mx_32";
  }
  return "?";
}

ScaleMode Fp8Linear::weight_mode() const noexcept {
  switch (scaling) {
    case Fp8WeightScaling::per_tensor: return ScaleMode::scalar;
    case Fp8WeightScaling::per_channel: return ScaleMode::outer_vec;
    case Fp8WeightScaling::block_128x128: return ScaleMode::blk128x128;
    case Fp8WeightScaling::mx_32: return ScaleMode::vec128;
  }
  return ScaleMode::scalar;
}

ScaleMode Fp8Linear::activation_mode() const noexcept {
  switch (scaling) {
    case Fp8WeightScaling::per_tensor: return ScaleMode::scalar;
    case Fp8WeightScaling::per_channel: return ScaleMode::outer_vec;
    case Fp8WeightScaling::block_128x128:
    case Fp8WeightScaling::mx_32: return ScaleMode::vec128;
  }
  return ScaleMode::scalar;
}

std::vector<std::string> fp8_linear_prefixes(const std::map<std::string, Tensor>& tensors) {
  static constexpr std::string_view kSuffix = ".weight";
  std::vector<std::string> prefixes;
  for (const auto& [name, t] : tensors) {
    if (name.size() > kSuffix.size() && name.ends_with(kSuffix) && t.dim() == 2 &&
        (t.dtype() == DType::float8_e4m3fn || t.dtype() == DType::float8_e5m2)) {
      prefixes.push_back(name.substr(0, name.size() - kSuffix.size()));
    }
  }
  return prefixes;
}

Fp8Linear fp8_linear(const std::map<std::string, Tensor>& tensors, std::string_view prefix, OptionalStream stream) {
  const std::string p(prefix);
  const auto fail = [&](const std::string& why) { throw InvalidArgumentError(kApi, concat("layer \"", p, "\": ", why)); };
  const auto find = [&](const char* suffix) -> const Tensor* {
    const auto it = tensors.find(p + suffix);
    return it == tensors.end() ? nullptr : &it->second;
  };
  const Tensor* weight = find(".weight");
  if (!weight) fail(concat("no tensor \"", p, ".weight\""));
  if (weight->dim() != 2 || (weight->dtype() != DType::float8_e4m3fn && weight->dtype() != DType::float8_e5m2)) {
    fail(concat("\"", p, ".weight\" is ", describe(*weight), "; an FP8 layer's weight is float8_e4m3fn or "
                "float8_e5m2 [out, in]"));
  }
  if (weight->size(0) > INT32_MAX || weight->size(1) > INT32_MAX) {
    fail(concat("\"", p, ".weight\" is ", describe(*weight), ", past cuBLAS's 32-bit dimensions"));
  }
  if (!weight->is_contiguous()) fail(concat("\"", p, ".weight\" is not contiguous (strides ",
                                            tensor::shape_string(weight->strides()), ")"));
  const Tensor* inv = find(".weight_scale_inv");
  const Tensor* plain = find(".weight_scale");
  if (inv && plain) fail(concat("has both \"", p, ".weight_scale_inv\" and \"", p, ".weight_scale\"; one scale is expected"));
  if (!inv && !plain) fail(concat("its FP8 weight has no scale (\"", p, ".weight_scale_inv\" or \"", p, ".weight_scale\")"));
  const Tensor& scale = inv ? *inv : *plain;
  const std::string scale_name = p + (inv ? ".weight_scale_inv" : ".weight_scale");

  Fp8Linear layer;
  layer.prefix = p;
  layer.weight = *weight;
  layer.out_features = weight->size(0);
  layer.in_features = weight->size(1);
  const std::int64_t out = layer.out_features, in = layer.in_features;
  const tensor::Device device = weight->device();
  if (scale.device() != device) {
    fail(concat("\"", scale_name, "\" is on ", scale.device().str(), ", its weight on ", device.str()));
  }
  const tensor::Shape& s = scale.sizes();
  const std::int64_t out_blocks = ceil_div(out, 128), in_blocks = ceil_div(in, 128);
  const auto wrong_shape = [&] {
    fail(concat("\"", scale_name, "\" is ", describe(scale), ", which fits no FP8 layout of a [", out, ", ", in,
                "] weight: float32 [] or [1] (per tensor), [", out, "] or [", out, ", 1] (per channel), [", out_blocks,
                ", ", in_blocks, "] (128x128 blocks), or float8_e8m0fnu [", out, ", ", ceil_div(in, 32),
                "] (MX, 32-weight blocks)"));
  };
  if (scale.dtype() == DType::float8_e8m0fnu) {
    if (s != tensor::Shape{out, ceil_div(in, 32)}) wrong_shape();
    // See Note [FP8 checkpoint layers]: equal to vec128 when each 128 weights share one scale.
    const std::vector<float> mx = scale.to(DType::float32, stream).to_vector<float>(stream);
    const std::int64_t groups = ceil_div(in, 32);
    std::vector<float> vec128(static_cast<std::size_t>(out * in_blocks));
    for (std::int64_t r = 0; r < out; ++r) {
      for (std::int64_t b = 0; b < in_blocks; ++b) {
        const float first = mx[static_cast<std::size_t>(r * groups + 4 * b)];
        for (std::int64_t g = 4 * b + 1; g < std::min(groups, 4 * b + 4); ++g) {
          if (mx[static_cast<std::size_t>(r * groups + g)] != first) {
            fail(concat("\"", scale_name, "\" is ", describe(scale), ", the OCP MX layout (a power-of-two scale per 32 "
                        "weights), and its scales differ within 128 weights (row ", r, ", columns ", 128 * b, "-",
                        std::min(in, 128 * b + 128) - 1, "), so no 128-element layout equals it; on ", where(scale),
                        " cuBLASLt has no 32-element block scaling for FP8 (CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0 "
                        "is Blackwell's, compute capability 10.0) and cudakit does not convert the weights"));
          }
        }
        vec128[static_cast<std::size_t>(b * out + r)] = first;  // rows contiguous: Note [FP8 scale modes]
      }
    }
    layer.scaling = Fp8WeightScaling::mx_32;
    layer.weight_scale = tensor::from_host(vec128, {in_blocks, out}, device, stream);
  } else {
    if (scale.dtype() != DType::float32 && scale.dtype() != DType::bfloat16 && scale.dtype() != DType::float16) {
      fail(concat("\"", scale_name, "\" is ", describe(scale), "; FP8 scales are float32 (or bfloat16, float16, "
                  "float8_e8m0fnu)"));
    }
    if (scale.numel() == 1 && s.size() <= 1) {
      layer.scaling = Fp8WeightScaling::per_tensor;
      layer.weight_scale = float32_scale(scale, {}, device, stream);
    } else if (s == tensor::Shape{out} || s == tensor::Shape{out, 1}) {
      layer.scaling = Fp8WeightScaling::per_channel;
      layer.weight_scale = float32_scale(scale, {out}, device, stream);
    } else if (s == tensor::Shape{out_blocks, in_blocks}) {
      layer.scaling = Fp8WeightScaling::block_128x128;
      const std::int64_t ld = block_scale_ld(in);
      if (ld == in_blocks) {
        layer.weight_scale = float32_scale(scale, {out_blocks, in_blocks}, device, stream);
      } else {  // rows copied to cuBLASLt's stride, the padding zero (never read)
        const std::vector<float> v = scale.to(DType::float32, stream).contiguous(stream).to_vector<float>(stream);
        std::vector<float> padded(static_cast<std::size_t>(out_blocks * ld), 0.0f);
        for (std::int64_t r = 0; r < out_blocks; ++r) {
          std::copy_n(v.begin() + r * in_blocks, in_blocks, padded.begin() + r * ld);
        }
        layer.weight_scale = tensor::from_host(padded, {out_blocks, ld}, device, stream);
      }
    } else {
      wrong_shape();
    }
  }
  if (const Tensor* input = find(".input_scale")) {
    if (input->numel() != 1 || input->dim() > 1 ||
        (input->dtype() != DType::float32 && input->dtype() != DType::bfloat16 && input->dtype() != DType::float16)) {
      fail(concat("\"", p, ".input_scale\" is ", describe(*input), "; a static activation scale is one float ([] or [1])"));
    }
    if (input->device() != device) fail(concat("\"", p, ".input_scale\" is on ", input->device().str(), ", its weight on ", device.str()));
    layer.input_scale = float32_scale(*input, {}, device, stream);
  }
  return layer;
}

void fp8_linear_forward(const Fp8Linear& layer, const Tensor& x, const Tensor& x_scale, Tensor& y,
                        OptionalStream stream) {
  const auto fail = [&](const std::string& why) {
    throw InvalidArgumentError("tunable::fp8_linear_forward", concat("layer \"", layer.prefix, "\": ", why));
  };
  const std::int64_t in = layer.in_features, out = layer.out_features;
  if (x.dim() != 2 || x.size(1) != in || !tensor::is_float8(x.dtype()) || !x.is_contiguous()) {
    fail(concat("x is ", describe(x), "; expected contiguous float8 [tokens, ", in, "]"));
  }
  const std::int64_t tokens = x.size(0);
  if (y.dim() != 2 || y.size(0) != tokens || y.size(1) != out || !y.is_contiguous() ||
      (y.dtype() != DType::float32 && y.dtype() != DType::bfloat16 && y.dtype() != DType::float16)) {
    fail(concat("y is ", describe(y), "; expected contiguous float32, bfloat16 or float16 [", tokens, ", ", out, "]"));
  }
  if (x_scale.dtype() != DType::float32) fail(concat("x_scale is ", describe(x_scale), "; scales are float32"));
  // cuBLASLt is handed raw pointers: one on another device (or the host) would fault on the GPU.
  const tensor::Device device = layer.weight.device();
  const std::array<std::pair<const char*, const Tensor*>, 3> operands{{{"x", &x}, {"x_scale", &x_scale}, {"y", &y}}};
  for (const auto& [name, t] : operands) {
    if (t->device() != device) {
      fail(concat(name, " is on ", t->device().str(), ", the layer's weight on ", device.str()));
    }
  }
  const ScaleMode mode = layer.activation_mode();
  const std::int64_t groups = ceil_div(in, 128);
  bool fits = false;
  switch (mode) {
    case ScaleMode::scalar: fits = x_scale.numel() == 1 && x_scale.dim() <= 1; break;
    case ScaleMode::outer_vec: fits = x_scale.dim() == 1 && x_scale.size(0) == tokens && x_scale.is_contiguous(); break;
    case ScaleMode::vec128:
      fits = x_scale.dim() == 2 && x_scale.size(0) == tokens && x_scale.size(1) == groups &&
             (tokens == 1 || x_scale.stride(0) == 1) && (groups == 1 || x_scale.stride(1) == tokens);
      break;
    case ScaleMode::blk128x128: break;
  }
  if (!fits) {
    fail(concat("x_scale is ", describe(x_scale), " (strides ", tensor::shape_string(x_scale.strides()), "); a ",
                fp8_weight_scaling_name(layer.scaling), " layer takes activations scaled ",
                mode == ScaleMode::scalar    ? std::string("per tensor: one float")
                : mode == ScaleMode::outer_vec ? concat("per token: [", tokens, "]")
                                               : concat("per token in 1x128 groups: [", tokens, ", ", groups,
                                                        "] with strides (1, ", tokens, ") (tokens contiguous)")));
  }
  // See Note [FP8 scale modes]: block scales need n (the tokens) to be a multiple of 4. A decode
  // step's one token is padded to four, its activations, scales and output only (a few rows),
  // never the weight: the padded rows' scales are zero and their outputs dropped.
  if (mode == ScaleMode::vec128 && tokens % 4 != 0) {
    const std::int64_t padded = (tokens + 3) / 4 * 4;
    const tensor::TensorOptions on_x{.dtype = x.dtype(), .device = x.device()};
    Tensor x4 = tensor::zeros({padded, in}, on_x, stream);
    x4.slice(0, 0, tokens).copy_(x, stream);
    Tensor scale4 = tensor::zeros({groups, padded}, {.dtype = DType::float32, .device = x.device()}, stream);
    scale4.slice(1, 0, tokens).copy_(x_scale.t(), stream);
    Tensor y4 = tensor::empty({padded, out}, {.dtype = y.dtype(), .device = y.device()}, stream);
    const Tensor scale4_t = scale4.t();
    fp8_linear_forward(layer, x4, scale4_t, y4, stream);
    y.copy_(y4.slice(0, 0, tokens), stream);
    return;
  }
  const auto gemm_type = [](DType d) {
    switch (d) {
      case DType::float8_e4m3fn: return GemmDType::float8_e4m3;
      case DType::float8_e5m2: return GemmDType::float8_e5m2;
      case DType::bfloat16: return GemmDType::bfloat16;
      case DType::float16: return GemmDType::float16;
      default: return GemmDType::float32;
    }
  };
  // y^T (column-major out x tokens) = W (row-major [out, in]: transa 't') x^T. Note [FP8 layouts].
  GemmArgs g;
  g.key.op = GemmOp::scaled_gemm;
  g.key.transa = 't';
  g.key.transb = 'n';
  g.key.m = out;
  g.key.n = tokens;
  g.key.k = in;
  g.key.lda = in;
  g.key.ldb = in;
  g.key.ldc = out;
  g.key.a_type = gemm_type(layer.weight.dtype());
  g.key.b_type = gemm_type(x.dtype());
  g.key.c_type = gemm_type(y.dtype());
  g.key.scale_a_mode = layer.weight_mode();
  g.key.scale_b_mode = mode;
  g.a = layer.weight.data_ptr();
  g.b = x.data_ptr();
  g.c = y.data_ptr();
  g.scale_a = static_cast<const float*>(layer.weight_scale.data_ptr());
  g.scale_b = static_cast<const float*>(x_scale.data_ptr());
  gemm(g, stream);
}

}  // namespace cudakit::tunable
