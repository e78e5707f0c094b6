#pragma once
// @brief GemmKey: everything that changes which GEMM implementation is fastest, or whether it is valid
// at all, written as PyTorch's TunableOp writes its results files: an OpName
// ("GemmTunableOp_BFloat16_TN") and a ParamsSignature ("tn_4096_16_4096_ld_4096_4096_4096...").
// See Note [GEMM keys].
//
// The problem is in cuBLAS's column-major terms, as torch's keys are: C (m x n, ldc) =
// alpha * op(A) (m x k) * op(B) (k x n) + beta * C; op is 'n' (as stored) or 't' (transposed).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace cudakit::tunable {

enum class GemmDType : std::uint8_t { float32, float16, bfloat16, float64, float8_e4m3, float8_e5m2 };

// Bytes per element.
[[nodiscard]] std::size_t element_size(GemmDType dtype) noexcept;
// torch's names in OpNames: "float", "Half", "BFloat16", "double", "Float8_e4m3fn", "Float8_e5m2".
[[nodiscard]] std::string_view torch_type_name(GemmDType dtype) noexcept;
[[nodiscard]] bool is_float8(GemmDType dtype) noexcept;

// cuBLASLt's epilogues that the tuner handles: a bias of m elements added to each column of C,
// then the activation.
enum class Epilogue : std::uint8_t { none, bias, relu, bias_relu, gelu, bias_gelu };
[[nodiscard]] std::string_view epilogue_name(Epilogue epilogue) noexcept;  // "none", "bias_gelu", ...
[[nodiscard]] bool has_bias(Epilogue epilogue) noexcept;

// How a ScaledGemm reads one operand's scale (cuBLASLt's cublasLtMatmulMatrixScale_t modes that
// Hopper runs for FP8). See Note [FP8 scale modes] for the layouts and the pairs allowed.
enum class ScaleMode : std::uint8_t {
  scalar,      // one float for the whole operand (per-tensor)
  outer_vec,   // one float per row of op(A) (m) or per column of op(B) (n): per channel / per token
  vec128,      // one float per 128 consecutive elements along k (1x128 groups), rows-major
  blk128x128,  // one float per 128x128 block, k-blocks contiguous, rows of blocks ld_scale apart
};
[[nodiscard]] std::string_view scale_mode_name(ScaleMode mode) noexcept;  // "scalar", "blk128x128", ...
// Floats a scale of `mode` holds for an operand of `rows` (m for A, n for B) x k.
[[nodiscard]] std::int64_t scale_elements(ScaleMode mode, std::int64_t rows, std::int64_t k) noexcept;
// The leading dimension of a blk128x128 scale: ceil(k / 128) rounded up to a multiple of 4, as
// cuBLASLt requires (a checkpoint's [ceil(rows/128), ceil(k/128)] scale is this layout when
// ceil(k/128) is a multiple of 4).
[[nodiscard]] std::int64_t block_scale_ld(std::int64_t k) noexcept;

// What kind of operation, which decides the OpName's prefix.
enum class GemmOp : std::uint8_t {
  gemm,                  // GemmTunableOp
  gemm_strided_batched,  // GemmStridedBatchedTunableOp
  gemm_and_bias,         // GemmAndBiasTunableOp (any epilogue)
  scaled_gemm,           // ScaledGemmTunableOp (float8 inputs, per-tensor scales)
};

struct GemmKey {
  GemmOp op = GemmOp::gemm;
  char transa = 'n';
  char transb = 'n';
  std::int64_t m = 0, n = 0, k = 0;
  std::int64_t lda = 0, ldb = 0, ldc = 0;
  std::int64_t batch = 1;
  std::int64_t stride_a = 0, stride_b = 0, stride_c = 0;
  GemmDType a_type = GemmDType::float32;
  GemmDType b_type = GemmDType::float32;
  GemmDType c_type = GemmDType::float32;  // the output (and C input); differs only for float8
  bool tf32 = false;                      // float32 inputs multiplied as TF32
  ScaleMode scale_a_mode = ScaleMode::scalar;  // ScaledGemm only
  ScaleMode scale_b_mode = ScaleMode::scalar;
  Epilogue epilogue = Epilogue::none;
  std::size_t workspace_bytes = 0;  // the cuBLASLt workspace candidates may use
  int alignment = 16;               // pointer alignment class: a power of two up to 256 bytes (all operands)
  int sm_count = 0;                 // multiprocessors of the stream's context

  bool operator==(const GemmKey&) const = default;

  // "GemmTunableOp_float_NT", "ScaledGemmTunableOp_Float8_e4m3fn_Float8_e4m3fn_BFloat16_TN", ...
  [[nodiscard]] std::string op_name() const;
  // torch's signature ("nt_M_N_K_ld_LDA_LDB_LDC", with "_B_BATCH" after K when batched) followed
  // by cudakit's own fields (a ScaledGemm's scale modes as "_sc_vec128_blk128x128" unless both
  // are scalar). See Note [GEMM keys].
  [[nodiscard]] std::string signature() const;
  // A key from a results file's two fields.
  // @throws InvalidArgumentError naming the field and what is wrong with it.
  [[nodiscard]] static GemmKey parse(std::string_view op_name, std::string_view signature);

  // Checks the sizes and leading dimensions against each other (lda >= rows of A as stored, ...),
  // and the rules of the operation (float8 only in scaled_gemm, an epilogue only in
  // gemm_and_bias, ...). @throws InvalidArgumentError naming the value that is wrong.
  void validate(const char* api) const;

 private:
  template <class Fail>
  void validate_scale_modes(const Fail& fail) const;
};

// The largest power of two up to kMaxAlignmentClass (256, cuBLASLt's largest alignment preference)
// that divides every address (0 is aligned to anything).
inline constexpr int kMaxAlignmentClass = 256;
[[nodiscard]] int alignment_class(std::initializer_list<const void*> pointers) noexcept;

struct GemmKeyHash {
  [[nodiscard]] std::size_t operator()(const GemmKey& key) const noexcept;
};

}  // namespace cudakit::tunable
