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

// The element type of a GEMM operand (float8_e4m3 is torch's Float8_e4m3fn). Float8 types are
// inputs of ScaledGemm only.
enum class GemmDType : std::uint8_t { float32, float16, bfloat16, float64, float8_e4m3, float8_e5m2 };

// Bytes per element.
// @param dtype an operand type
// @return 1, 2, 4 or 8.
[[nodiscard]] std::size_t element_size(GemmDType dtype) noexcept;
// torch's names in OpNames: "float", "Half", "BFloat16", "double", "Float8_e4m3fn", "Float8_e5m2".
// @param dtype an operand type
// @return its name as torch writes it in an OpName.
[[nodiscard]] std::string_view torch_type_name(GemmDType dtype) noexcept;
// @param dtype an operand type
// @return true for float8_e4m3 and float8_e5m2.
[[nodiscard]] bool is_float8(GemmDType dtype) noexcept;

// cuBLASLt's epilogues that the tuner handles: a bias of m elements added to each column of C,
// then the activation.
enum class Epilogue : std::uint8_t { none, bias, relu, bias_relu, gelu, bias_gelu };
// @param epilogue an epilogue
// @return its name in a signature: "none", "bias_gelu", ...
[[nodiscard]] std::string_view epilogue_name(Epilogue epilogue) noexcept;
// @param epilogue an epilogue
// @return true for bias, bias_relu and bias_gelu (GemmArgs::bias is then read).
[[nodiscard]] bool has_bias(Epilogue epilogue) noexcept;

// How a ScaledGemm reads one operand's scale (cuBLASLt's cublasLtMatmulMatrixScale_t modes that
// Hopper runs for FP8). See Note [FP8 scale modes] for the layouts and the pairs allowed.
enum class ScaleMode : std::uint8_t {
  scalar,      // one float for the whole operand (per-tensor)
  outer_vec,   // one float per row of op(A) (m) or per column of op(B) (n): per channel / per token
  vec128,      // one float per 128 consecutive elements along k (1x128 groups), rows-major
  blk128x128,  // one float per 128x128 block, k-blocks contiguous, rows of blocks ld_scale apart
};
// @param mode a scale mode
// @return its name in a signature: "scalar", "blk128x128", ...
[[nodiscard]] std::string_view scale_mode_name(ScaleMode mode) noexcept;
// Floats a scale of `mode` holds for an operand of `rows` (m for A, n for B) x k.
// @param mode the operand's scale mode
// @param rows the operand's rows: m for A, n for B
// @param k the inner dimension
// @return the number of floats the scale pointer must provide.
[[nodiscard]] std::int64_t scale_elements(ScaleMode mode, std::int64_t rows, std::int64_t k) noexcept;
// The leading dimension of a blk128x128 scale: ceil(k / 128) rounded up to a multiple of 4, as
// cuBLASLt requires (a checkpoint's [ceil(rows/128), ceil(k/128)] scale is this layout when
// ceil(k/128) is a multiple of 4).
// @param k the inner dimension
// @return the floats between one row of blocks and the next.
[[nodiscard]] std::int64_t block_scale_ld(std::int64_t k) noexcept;

// What kind of operation, which decides the OpName's prefix.
enum class GemmOp : std::uint8_t {
  gemm,                  // GemmTunableOp
  gemm_strided_batched,  // GemmStridedBatchedTunableOp
  gemm_and_bias,         // GemmAndBiasTunableOp (any epilogue)
  scaled_gemm,           // ScaledGemmTunableOp (float8 inputs, with their scales: ScaleMode)
};

// One GEMM problem as TunableOp keys its results: the operation, the shapes and types in
// cuBLAS's column-major terms, and what the implementations' validity depends on (workspace,
// pointer alignment, SM count). Two calls share a result only when their keys are equal.
struct GemmKey {
  GemmOp op = GemmOp::gemm;  // which operation, hence the OpName's prefix
  char transa = 'n';  // op(A): 'n' as stored, 't' transposed
  char transb = 'n';  // op(B): 'n' as stored, 't' transposed
  std::int64_t m = 0,  // rows of op(A) and of C
      n = 0,           // columns of op(B) and of C
      k = 0;           // columns of op(A) and rows of op(B): the inner dimension
  std::int64_t lda = 0,  // A's leading dimension as stored (elements between its columns)
      ldb = 0,           // B's leading dimension as stored
      ldc = 0;           // C's leading dimension
  std::int64_t batch = 1;  // GEMMs in the batch (gemm_strided_batched only; else 1)
  std::int64_t stride_a = 0,  // elements from one GEMM's A to the next's (gemm_strided_batched only)
      stride_b = 0,           // elements from one GEMM's B to the next's
      stride_c = 0;           // elements from one GEMM's C to the next's
  GemmDType a_type = GemmDType::float32;  // A's element type
  GemmDType b_type = GemmDType::float32;  // B's element type (A's, except in ScaledGemm)
  GemmDType c_type = GemmDType::float32;  // the output (and C input); differs only for float8
  bool tf32 = false;                      // float32 inputs multiplied as TF32
  ScaleMode scale_a_mode = ScaleMode::scalar;  // ScaledGemm only: how A's scale is read
  ScaleMode scale_b_mode = ScaleMode::scalar;  // ScaledGemm only: how B's scale is read
  Epilogue epilogue = Epilogue::none;  // gemm_and_bias only: what follows the product
  std::size_t workspace_bytes = 0;  // the cuBLASLt workspace candidates may use
  int alignment = 16;               // pointer alignment class: a power of two up to 256 bytes (all operands)
  int sm_count = 0;                 // multiprocessors of the stream's context

  // Whether both keys are the same problem, field by field.
  // @return true when every field is equal.
  bool operator==(const GemmKey&) const = default;

  // The results file's OpName of this key.
  // @return "GemmTunableOp_float_NT", "ScaledGemmTunableOp_Float8_e4m3fn_Float8_e4m3fn_BFloat16_TN", ...
  [[nodiscard]] std::string op_name() const;
  // torch's signature ("nt_M_N_K_ld_LDA_LDB_LDC", with "_B_BATCH" after K when batched) followed
  // by cudakit's own fields (a ScaledGemm's scale modes as "_sc_vec128_blk128x128" unless both
  // are scalar). See Note [GEMM keys].
  // @return the results file's ParamsSignature of this key.
  [[nodiscard]] std::string signature() const;
  // A key from a results file's two fields: the inverse of op_name() and signature().
  // @param op_name the OpName field
  // @param signature the ParamsSignature field (torch's own, without cudakit's fields, is refused)
  // @return the key they describe (not validated: see validate())
  // @throws InvalidArgumentError naming the field and what is wrong with it.
  [[nodiscard]] static GemmKey parse(std::string_view op_name, std::string_view signature);

  // Checks the sizes and leading dimensions against each other (lda >= rows of A as stored, ...),
  // and the rules of the operation (float8 only in scaled_gemm, an epilogue only in
  // gemm_and_bias, ...).
  // @param api the calling API's name, for the message
  // @throws InvalidArgumentError naming the value that is wrong.
  void validate(const char* api) const;

 private:
  template <class Fail>
  void validate_scale_modes(const Fail& fail) const;
};

// The largest alignment class a key can have: cuBLASLt's largest alignment preference, in bytes.
inline constexpr int kMaxAlignmentClass = 256;
// The largest power of two up to kMaxAlignmentClass (256, cuBLASLt's largest alignment preference)
// that divides every address (0 is aligned to anything).
// @param pointers the operands' addresses
// @return the alignment class for GemmKey::alignment (1 to 256 bytes).
[[nodiscard]] int alignment_class(std::initializer_list<const void*> pointers) noexcept;

// A hash of every field of a GemmKey, for unordered containers of keys.
struct GemmKeyHash {
  // @param key the key to hash
  // @return a hash that equal keys share.
  [[nodiscard]] std::size_t operator()(const GemmKey& key) const noexcept;
};

}  // namespace cudakit::tunable
