#pragma once
// @brief Fp8Linear: an FP8 checkpoint's linear layer as its tensors lie (loaded by
// gds::load_safetensors, or from anywhere else), recognised by name and shape and fed to the
// scaled GEMM as it is: the weight's bytes are never converted, only a small scale tensor is,
// where cuBLASLt reads another layout.
//
//   auto loaded = gds::load_safetensors(path, tensor::Device::cuda(0));
//   for (const std::string& prefix : tunable::fp8_linear_prefixes(loaded.tensors)) {
//     tunable::Fp8Linear layer = tunable::fp8_linear(loaded.tensors, prefix);
//     ...  // quantize x as layer.activation_mode() says, then:
//     tunable::fp8_linear_forward(layer, x_fp8, x_scale, y);
//   }
//
// Layouts recognised for a weight "P.weight" (float8_e4m3fn or float8_e5m2, [out, in]); the
// scale is "P.weight_scale_inv" (DeepSeek-V3, Qwen3-FP8) or "P.weight_scale" (compressed-tensors,
// FBGEMM), float32 (bfloat16 and float16 are converted), multiplying: w = w_fp8 * scale.
//   per_tensor:    [] or [1]                                 -> ScaleMode::scalar
//   per_channel:   [out] or [out, 1]                         -> ScaleMode::outer_vec
//   block_128x128: [ceil(out/128), ceil(in/128)]             -> ScaleMode::blk128x128
//   mx_32:         float8_e8m0fnu [out, ceil(in/32)] (OCP MX) -> ScaleMode::vec128 when the four
//                  scales of every 128 weights agree; refused otherwise (Hopper has no 32-element
//                  block scaling), naming the layout and the device.
// "P.input_scale" ([] or [1], float32), where present, is the checkpoint's static activation scale.
// See Note [FP8 checkpoint layers] in src/tunable/fp8_linear.cpp.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cudakit/core/optional_stream.hpp"
#include "cudakit/tensor/tensor.hpp"
#include "cudakit/tunable/gemm_key.hpp"

namespace cudakit::tunable {

// How a checkpoint scales an FP8 weight: the layouts listed above.
enum class Fp8WeightScaling : std::uint8_t { per_tensor, per_channel, block_128x128, mx_32 };
// @param scaling a weight scaling
// @return its name ("per_tensor", "per_channel", "block_128x128", "mx_32").
[[nodiscard]] std::string_view fp8_weight_scaling_name(Fp8WeightScaling scaling) noexcept;

// One FP8 linear layer of a checkpoint, ready for fp8_linear_forward(): the weight as loaded and
// its scale in the layout cuBLASLt reads. It shares the checkpoint's tensors (no copies of the
// weight).
struct Fp8Linear {
  std::string prefix;             // "model.layers.0.mlp.gate_proj"
  tensor::Tensor weight;          // the checkpoint's [out, in] float8 tensor, as loaded
  Fp8WeightScaling scaling = Fp8WeightScaling::per_tensor;  // the layout the checkpoint's scale was in
  // float32 on the weight's device, 16-byte aligned, in the layout weight_mode() reads (Note [FP8
  // scale modes] in src/tunable/gemm_key.cpp): the checkpoint's own tensor where it already is.
  tensor::Tensor weight_scale;
  std::optional<tensor::Tensor> input_scale;  // float32 [], the checkpoint's static activation scale
  std::int64_t out_features = 0;  // the weight's rows: y's columns
  std::int64_t in_features = 0;   // the weight's columns: x's columns

  // The scale mode of the weight (cuBLASLt's A) and the one the activations (B) must come in:
  // scalar with scalar, outer_vec (per channel) with outer_vec (per token), a block scale with
  // vec128 (per token, 1x128 groups: DeepSeek-V3's activation quantization).
  // @return the weight's mode: scalar, outer_vec, blk128x128, or vec128 for an MX layer.
  [[nodiscard]] ScaleMode weight_mode() const noexcept;
  // The scale mode x_scale must be in for fp8_linear_forward() (see weight_mode()).
  // @return scalar, outer_vec or vec128.
  [[nodiscard]] ScaleMode activation_mode() const noexcept;
};

// The prefixes P of every "P.weight" that is a 2-D float8 tensor, in name order.
// @param tensors a checkpoint's tensors by name
// @return the prefixes, each a candidate for fp8_linear() (its scale is not looked at here).
[[nodiscard]] std::vector<std::string> fp8_linear_prefixes(const std::map<std::string, tensor::Tensor>& tensors);

// The layer named `prefix`, its scale recognised and brought to cuBLASLt's layout (on `stream`).
// Stream ordering: the scale's conversion is queued on `stream` (the current stream when
// omitted); an MX scale, a block scale whose rows need padding and a scale off the 16-byte
// alignment pass through the host, which then waits for `stream`. The weight is never copied.
// @param tensors a checkpoint's tensors by name (the layer shares them)
// @param prefix the layer's name: "P" of "P.weight"
// @param stream the stream the scale is converted on
// @return the layer, its weight_scale float32 on the weight's device
// @throws InvalidArgumentError naming the layer, the tensor, its dtype and shape and the shapes
// that would be accepted: no "P.weight", a weight that is not a 2-D float8 tensor, no scale or
// both scale names, a scale of another shape or dtype, an input_scale that is not one float, an
// MX scale that no Hopper layout equals (with the device), tensors on different devices.
[[nodiscard]] Fp8Linear fp8_linear(const std::map<std::string, tensor::Tensor>& tensors, std::string_view prefix,
                                   OptionalStream stream = {});

// y = x W^T for FP8 activations x [tokens, in] (row-major) with their scale `x_scale` in the
// layout activation_mode() names:
//   scalar: one float ([] or [1]); outer_vec: [tokens]; vec128: [tokens, ceil(in/128)] with
//   strides (1, tokens) (tokens contiguous: the transpose of a contiguous [ceil(in/128), tokens]).
// y: [tokens, out] float32, bfloat16 or float16, row-major. Through tunable::gemm (tuned when
// tuning is on), queued on `stream`.
// Stream ordering: queued on `stream` (the current stream when omitted) and returns before y is
// written; a first call of a shape with tuning on tunes it first and synchronizes `stream`
// (tune()). A vec128 call whose token count is not a multiple of 4 pads x, x_scale and y into
// temporaries on `stream` and copies y back there.
// @param layer the layer (fp8_linear())
// @param x the FP8 activations [tokens, in], contiguous
// @param x_scale x's float32 scale in the layout activation_mode() names
// @param y the output [tokens, out], contiguous, written whole
// @param stream the stream to queue the GEMM on
// @throws InvalidArgumentError for shapes, dtypes or layouts that do not fit, naming them; the
// GEMM's own errors (GemmKey::validate) for what cuBLASLt refuses.
// @throws CublasError when cuBLASLt fails.
void fp8_linear_forward(const Fp8Linear& layer, const tensor::Tensor& x, const tensor::Tensor& x_scale,
                        tensor::Tensor& y, OptionalStream stream = {});

}  // namespace cudakit::tunable
