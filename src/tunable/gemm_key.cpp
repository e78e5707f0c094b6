#include "cudakit/tunable/gemm_key.hpp"

#include <array>
#include <charconv>
#include <cstdint>
#include <functional>
#include <utility>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/error.hpp"

namespace cudakit::tunable {

// Note [GEMM keys]
// A result is reused only for a call whose key is equal, so the key holds everything that changes
// which implementation is fastest or whether it runs at all:
// - the problem: op, transposes, m, n, k, leading dimensions, batch and strides, dtypes, TF32,
//   epilogue (torch's fields, plus the strides and the epilogue torch leaves out);
// - what cuBLASLt's algorithms depend on beyond it: the workspace they may use (an algorithm
//   tuned with 32 MiB may need it), the alignment class of the pointers (cuBLASLt selects
//   vectorized kernels by it: an algorithm found for 16-byte-aligned operands may be invalid for
//   2-byte-aligned ones; classes go up to 256 bytes, the largest cuBLASLt's preferences know, so
//   the heuristic is told what torch tells it: See Note [Alignment preferences]), and the multiprocessor count of the stream's context (a green context
//   with 66 of 132 SMs wants other tiles and split-K factors).
// The OpName and the first part of the signature are torch's, so a key reads like torch's in a
// results file; cudakit's fields follow, in this grammar:
//   {ta}{tb}_{m}_{n}_{k}[_B_{batch}]_ld_{lda}_{ldb}_{ldc}[_st_{sa}_{sb}_{sc}][_ep_{epilogue}]
//   [_tf32]_ws_{workspace bytes}_al_{alignment}_sm_{sm count}
// A torch-written line (without cudakit's fields) does not parse as a key: its Solution names
// torch's implementations, which cudakit has not got.

namespace {

constexpr std::array<std::pair<GemmDType, std::string_view>, 6> kTypeNames{{
    {GemmDType::float32, "float"},
    {GemmDType::float16, "Half"},
    {GemmDType::bfloat16, "BFloat16"},
    {GemmDType::float64, "double"},
    {GemmDType::float8_e4m3, "Float8_e4m3fn"},
    {GemmDType::float8_e5m2, "Float8_e5m2"},
}};

constexpr std::array<std::pair<Epilogue, std::string_view>, 6> kEpilogueNames{{
    {Epilogue::none, "none"},
    {Epilogue::bias, "bias"},
    {Epilogue::relu, "relu"},
    {Epilogue::bias_relu, "bias_relu"},
    {Epilogue::gelu, "gelu"},
    {Epilogue::bias_gelu, "bias_gelu"},
}};

constexpr std::array<std::pair<ScaleMode, std::string_view>, 4> kScaleModeNames{{
    {ScaleMode::scalar, "scalar"},
    {ScaleMode::outer_vec, "outer_vec"},
    {ScaleMode::vec128, "vec128"},
    {ScaleMode::blk128x128, "blk128x128"},
}};

constexpr std::array<std::pair<GemmOp, std::string_view>, 4> kOpPrefixes{{
    {GemmOp::gemm, "GemmTunableOp_"},
    {GemmOp::gemm_strided_batched, "GemmStridedBatchedTunableOp_"},
    {GemmOp::gemm_and_bias, "GemmAndBiasTunableOp_"},
    {GemmOp::scaled_gemm, "ScaledGemmTunableOp_"},
}};

// Reads fields off the front of a text, failing with the text and what was expected.
class Reader {
 public:
  Reader(std::string_view text, const char* field) : all_(text), rest_(text), field_(field) {}

  [[noreturn]] void fail(std::string_view why) const {
    throw InvalidArgumentError("GemmKey::parse",
                               cudakit::detail::concat(field_, " \"", all_, "\": ", why));
  }
  bool take(std::string_view literal) {
    if (rest_.substr(0, literal.size()) != literal) return false;
    rest_.remove_prefix(literal.size());
    return true;
  }
  void expect(std::string_view literal) {
    if (!take(literal)) fail(cudakit::detail::concat("expected \"", literal, "\" before \"", rest_, "\""));
  }
  std::int64_t integer(std::string_view what, std::int64_t min_value) {
    std::int64_t value = 0;
    const auto [end, ec] = std::from_chars(rest_.data(), rest_.data() + rest_.size(), value);
    if (ec != std::errc() || end == rest_.data()) fail(cudakit::detail::concat(what, " is not an integer"));
    if (value < min_value) fail(cudakit::detail::concat(what, " is ", value, ", below ", min_value));
    rest_.remove_prefix(static_cast<std::size_t>(end - rest_.data()));
    return value;
  }
  char transpose() {
    if (rest_.empty() || (rest_[0] != 'n' && rest_[0] != 't' && rest_[0] != 'N' && rest_[0] != 'T')) {
      fail("a transpose must be n or t");
    }
    const char c = static_cast<char>(rest_[0] | 0x20);  // lower case
    rest_.remove_prefix(1);
    return c;
  }
  template <class Table>
  auto name(const Table& table, std::string_view what) {
    // The longest match first: "bias_relu" before "bias".
    std::size_t best = table.size();
    for (std::size_t i = 0; i < table.size(); ++i) {
      if (rest_.substr(0, table[i].second.size()) == table[i].second &&
          (best == table.size() || table[i].second.size() > table[best].second.size())) {
        best = i;
      }
    }
    if (best == table.size()) fail(cudakit::detail::concat("unknown ", what, " at \"", rest_, "\""));
    rest_.remove_prefix(table[best].second.size());
    return table[best].first;
  }
  [[nodiscard]] bool done() const { return rest_.empty(); }
  void expect_end() {
    if (!rest_.empty()) fail(cudakit::detail::concat("unexpected \"", rest_, "\" at the end"));
  }

 private:
  std::string_view all_;
  std::string_view rest_;
  const char* field_;
};

template <class Table, class Value>
std::string_view lookup(const Table& table, Value value) {
  for (const auto& [v, name] : table) {
    if (v == value) return name;
  }
  return "?";
}

char upper(char c) { return static_cast<char>(c & ~0x20); }

}  // namespace

std::size_t element_size(GemmDType dtype) noexcept {
  switch (dtype) {
    case GemmDType::float32: return 4;
    case GemmDType::float16:
    case GemmDType::bfloat16: return 2;
    case GemmDType::float64: return 8;
    case GemmDType::float8_e4m3:
    case GemmDType::float8_e5m2: return 1;
  }
  return 4;
}

std::string_view torch_type_name(GemmDType dtype) noexcept { return lookup(kTypeNames, dtype); }
bool is_float8(GemmDType dtype) noexcept {
  return dtype == GemmDType::float8_e4m3 || dtype == GemmDType::float8_e5m2;
}
std::string_view epilogue_name(Epilogue epilogue) noexcept { return lookup(kEpilogueNames, epilogue); }
bool has_bias(Epilogue epilogue) noexcept {
  return epilogue == Epilogue::bias || epilogue == Epilogue::bias_relu || epilogue == Epilogue::bias_gelu;
}

std::string_view scale_mode_name(ScaleMode mode) noexcept { return lookup(kScaleModeNames, mode); }

std::int64_t block_scale_ld(std::int64_t k) noexcept { return ((k + 127) / 128 + 3) / 4 * 4; }

std::int64_t scale_elements(ScaleMode mode, std::int64_t rows, std::int64_t k) noexcept {
  switch (mode) {
    case ScaleMode::scalar: return 1;
    case ScaleMode::outer_vec: return rows;
    case ScaleMode::vec128: return rows * ((k + 127) / 128);
    case ScaleMode::blk128x128: return (rows + 127) / 128 * block_scale_ld(k);
  }
  return 1;
}

std::string GemmKey::op_name() const {
  std::string name(lookup(kOpPrefixes, op));
  name += torch_type_name(a_type);
  if (op == GemmOp::scaled_gemm) {
    name += '_';
    name += torch_type_name(b_type);
    name += '_';
    name += torch_type_name(c_type);
  }
  name += '_';
  name += upper(transa);
  name += upper(transb);
  return name;
}

std::string GemmKey::signature() const {
  std::string s = cudakit::detail::concat(transa, transb, '_', m, '_', n, '_', k);
  if (op == GemmOp::gemm_strided_batched) s += cudakit::detail::concat("_B_", batch);
  s += cudakit::detail::concat("_ld_", lda, '_', ldb, '_', ldc);
  if (op == GemmOp::gemm_strided_batched) s += cudakit::detail::concat("_st_", stride_a, '_', stride_b, '_', stride_c);
  if (epilogue != Epilogue::none) s += cudakit::detail::concat("_ep_", epilogue_name(epilogue));
  if (tf32) s += "_tf32";
  if (scale_a_mode != ScaleMode::scalar || scale_b_mode != ScaleMode::scalar) {
    s += cudakit::detail::concat("_sc_", scale_mode_name(scale_a_mode), '_', scale_mode_name(scale_b_mode));
  }
  s += cudakit::detail::concat("_ws_", workspace_bytes, "_al_", alignment, "_sm_", sm_count);
  return s;
}

GemmKey GemmKey::parse(std::string_view op_name, std::string_view signature) {
  GemmKey key;
  Reader name(op_name, "OpName");
  key.op = name.name(kOpPrefixes, "operation");
  key.a_type = name.name(kTypeNames, "element type");
  key.b_type = key.a_type;
  key.c_type = key.a_type;
  if (key.op == GemmOp::scaled_gemm) {
    name.expect("_");
    key.b_type = name.name(kTypeNames, "element type");
    name.expect("_");
    key.c_type = name.name(kTypeNames, "element type");
  }
  name.expect("_");
  const char name_transa = name.transpose();
  const char name_transb = name.transpose();
  name.expect_end();

  Reader sig(signature, "ParamsSignature");
  key.transa = sig.transpose();
  key.transb = sig.transpose();
  if (key.transa != name_transa || key.transb != name_transb) {
    sig.fail("its transposes differ from the OpName's");
  }
  // "{prefix}{a}_{b}_{c}": three integers after a prefix.
  const auto three = [&](std::string_view prefix, std::array<std::pair<std::int64_t*, const char*>, 3> fields,
                         std::int64_t min_value) {
    sig.expect(prefix);
    for (std::size_t i = 0; i < fields.size(); ++i) {
      if (i > 0) sig.expect("_");
      *fields[i].first = sig.integer(fields[i].second, min_value);
    }
  };
  three("_", {{{&key.m, "m"}, {&key.n, "n"}, {&key.k, "k"}}}, 0);
  if (key.op == GemmOp::gemm_strided_batched) {
    sig.expect("_B_");
    key.batch = sig.integer("batch", 1);
  }
  three("_ld_", {{{&key.lda, "lda"}, {&key.ldb, "ldb"}, {&key.ldc, "ldc"}}}, 1);
  if (key.op == GemmOp::gemm_strided_batched) {
    three("_st_", {{{&key.stride_a, "stride_a"}, {&key.stride_b, "stride_b"}, {&key.stride_c, "stride_c"}}}, 0);
  }
  if (sig.take("_ep_")) key.epilogue = sig.name(kEpilogueNames, "epilogue");
  if (sig.take("_tf32")) key.tf32 = true;
  if (sig.take("_sc_")) {
    key.scale_a_mode = sig.name(kScaleModeNames, "scale mode");
    sig.expect("_");
    key.scale_b_mode = sig.name(kScaleModeNames, "scale mode");
  }
  sig.expect("_ws_");
  key.workspace_bytes = static_cast<std::size_t>(sig.integer("workspace", 0));
  sig.expect("_al_");
  key.alignment = static_cast<int>(sig.integer("alignment", 1));
  sig.expect("_sm_");
  key.sm_count = static_cast<int>(sig.integer("sm count", 1));
  sig.expect_end();
  key.validate("GemmKey::parse");
  return key;
}

// Note [FP8 scale modes]
// Besides one float per operand, cuBLASLt (12.9 and later, compute capability 9.0) reads FP8
// scales in three more layouts, each set per operand with CUBLASLT_MATMUL_DESC_{A,B}_SCALE_MODE;
// cuBLAS's documentation ("1D and 128x128 2D block scaling for FP8 data types", and the outer
// vector mode of cublasLtMatmulMatrixScale_t) gives them as follows, in the terms of GemmKey
// (op(A) m x k, op(B) k x n, column-major; for the TN layout both operands K-major, so a row-major
// weight [out, in] is A with m = out, and row-major activations [tokens, in] are B with n = tokens):
// - outer_vec: m floats for A, n for B; element (i, j) of the product is multiplied by the i-th
//   of A's and the j-th of B's (per-channel weights, per-token activations). Paired with outer_vec.
// - vec128: one float per 128 consecutive k of each row, L = ceil(k / 128) of them per row,
//   stored rows-major: A's m x L with m contiguous (element (i, b) at b * m + i), B's n x L with n
//   contiguous. A quantizer that writes [tokens, L] row-major (DeepSeek's act_quant) has the
//   transpose of this; the layer code transposes those few floats, never the data.
// - blk128x128: one float per 128 x 128 block, k-blocks contiguous: element (p, b) (rows block p,
//   k-block b) at p * ld + b with ld = block_scale_ld(k) = L rounded up to a multiple of 4. A
//   checkpoint's weight_scale_inv [ceil(out / 128), ceil(in / 128)] row-major is this layout
//   exactly when L is a multiple of 4 (every DeepSeek-V3 and Qwen3 projection); otherwise its rows
//   are copied to the padded stride (safetensors_fp8 in the layer code does).
// The block modes pair as vec128 x vec128, vec128 x blk128x128 and blk128x128 x vec128 (not
// blk x blk); D is float16, bfloat16 or float32; scale pointers 16-byte aligned; m and n
// multiples of 4 (tunable::fp8_linear_forward pads a token count that is not to the next
// multiple: activations, scales and output, never the weight). Partial blocks are laid out (the ceil above) for m and n; a k that is not a
// multiple of 128 is refused here: the documentation's layouts leave open whether a partial last
// k-block is read, and padding k would mean copying the weights (notes/gds.md, "FP8 block scales").
// The MX layout (VEC32_UE8M0, 32-element blocks with E8M0 scales) has no Hopper kernel: a
// checkpoint holding it is refused by the layer code with the layout and the device named.
template <class Fail>
void GemmKey::validate_scale_modes(const Fail& fail) const {
  const ScaleMode sa = scale_a_mode, sb = scale_b_mode;
  if (sa == ScaleMode::scalar && sb == ScaleMode::scalar) return;
  const auto pair = cudakit::detail::concat(scale_mode_name(sa), " x ", scale_mode_name(sb));
  const bool block_a = sa == ScaleMode::vec128 || sa == ScaleMode::blk128x128;
  const bool block_b = sb == ScaleMode::vec128 || sb == ScaleMode::blk128x128;
  if (sa == ScaleMode::outer_vec || sb == ScaleMode::outer_vec) {
    if (sa != sb) {
      fail(cudakit::detail::concat("scale modes ", pair, ": cuBLASLt pairs outer_vec only with outer_vec (broadcast a "
                                   "per-tensor scale to a vector to mix them)"));
    }
  } else if (!block_a || !block_b) {
    fail(cudakit::detail::concat("scale modes ", pair, ": a block scale pairs only with a block scale (vec128 or "
                                 "blk128x128); use vec128 for a per-tensor or per-token operand"));
  } else if (sa == ScaleMode::blk128x128 && sb == ScaleMode::blk128x128) {
    fail("scale modes blk128x128 x blk128x128: cuBLASLt has no 2-D x 2-D block scaling; quantize one operand "
         "(the activations) in 1x128 groups (vec128)");
  }
  if ((block_a || block_b) && (m % 4 != 0 || n % 4 != 0)) {
    fail(cudakit::detail::concat("scale modes ", pair, " need m and n to be multiples of 4 (m is ", m, ", n ", n, ")"));
  }
  if ((block_a || block_b) && k % 128 != 0) {
    fail(cudakit::detail::concat("scale modes ", pair, " need k to be a multiple of 128 (k is ", k,
                                 "); see Note [FP8 scale modes]"));
  }
}

void GemmKey::validate(const char* api) const {
  const auto fail = [&](const std::string& why) {
    throw InvalidArgumentError(api, cudakit::detail::concat(op_name(), " ", signature(), ": ", why));
  };
  if (m < 0 || n < 0 || k < 0) fail("m, n and k must not be negative");
  if (m > INT32_MAX || n > INT32_MAX || k > INT32_MAX || lda > INT32_MAX || ldb > INT32_MAX ||
      ldc > INT32_MAX) {
    fail("m, n, k and the leading dimensions must fit in 32 bits (cuBLAS's int)");
  }
  const std::int64_t a_rows = transa == 'n' ? m : k, b_rows = transb == 'n' ? k : n;
  if (lda < std::max<std::int64_t>(a_rows, 1)) fail(cudakit::detail::concat("lda ", lda, " is below A's ", a_rows, " rows as stored"));
  if (ldb < std::max<std::int64_t>(b_rows, 1)) fail(cudakit::detail::concat("ldb ", ldb, " is below B's ", b_rows, " rows as stored"));
  if (ldc < std::max<std::int64_t>(m, 1)) fail(cudakit::detail::concat("ldc ", ldc, " is below C's ", m, " rows"));
  if (batch < 1) fail("batch must be at least 1");
  if (op != GemmOp::gemm_strided_batched && (batch != 1 || stride_a || stride_b || stride_c)) {
    fail("only GemmStridedBatched has a batch and strides");
  }
  if (op == GemmOp::gemm_strided_batched && batch > 1 && stride_c < ldc * n) {
    fail(cudakit::detail::concat("stride_c ", stride_c, " makes the batch's outputs overlap (below ldc * n = ", ldc * n, ")"));
  }
  if ((epilogue != Epilogue::none) != (op == GemmOp::gemm_and_bias)) {
    fail("an epilogue belongs to GemmAndBias, and GemmAndBias has one");
  }
  const bool fp8 = is_float8(a_type) || is_float8(b_type);
  if (fp8 != (op == GemmOp::scaled_gemm)) fail("float8 inputs belong to ScaledGemm, and ScaledGemm has them");
  if (op == GemmOp::scaled_gemm) {
    if (!is_float8(a_type) || !is_float8(b_type)) fail("ScaledGemm needs float8 A and B");
    if (a_type == GemmDType::float8_e5m2 && b_type == GemmDType::float8_e5m2) {
      fail("cuBLASLt has no e5m2 x e5m2 FP8 GEMM (one input must be e4m3)");
    }
    if (c_type == GemmDType::float64 || is_float8(c_type)) {
      // A float8 D needs a D scale and an amax pointer, which ScaledGemm's arguments do not have.
      fail("a float8 GEMM writes float32, float16 or bfloat16");
    }
    // See Note [FP8 layouts].
    if (transa != 't' || transb != 'n') {
      fail("cuBLASLt's FP8 GEMMs on Hopper need the TN layout (transa = t, transb = n: A and B "
           "both K-major); transpose the operands in memory, or swap them and compute C^T");
    }
    if (lda % 16 != 0 || ldb % 16 != 0) fail("FP8 GEMMs need lda and ldb that are multiples of 16");
    if (k % 16 != 0) fail(cudakit::detail::concat("FP8 GEMMs need k to be a multiple of 16 (k is ", k, ")"));
    const std::int64_t c_size = static_cast<std::int64_t>(element_size(c_type));
    if ((m * c_size) % 16 != 0 || (ldc * c_size) % 16 != 0) {
      fail(cudakit::detail::concat("FP8 GEMMs need m and ldc to be multiples of 16 bytes of the output (", 16 / c_size,
                                   " ", torch_type_name(c_type), " elements; m is ", m, ", ldc ", ldc, ")"));
    }
    if (alignment < 16) {
      fail(cudakit::detail::concat("FP8 GEMMs need 16-byte-aligned A, B and C (their alignment class is ", alignment,
                                   " bytes)"));
    }
    validate_scale_modes(fail);
  } else if (c_type != a_type || b_type != a_type) {
    fail("A, B and C must have one dtype (except in ScaledGemm)");
  }
  if (op != GemmOp::scaled_gemm && (scale_a_mode != ScaleMode::scalar || scale_b_mode != ScaleMode::scalar)) {
    fail("scale modes belong to ScaledGemm");
  }
  if (tf32 && a_type != GemmDType::float32) fail("TF32 applies to float32 inputs only");
  if (alignment < 1 || alignment > kMaxAlignmentClass || (alignment & (alignment - 1)) != 0) {
    fail(cudakit::detail::concat("alignment class ", alignment, " is not a power of two from 1 to ",
                                 kMaxAlignmentClass));
  }
  if (sm_count < 1) fail("the SM count must be positive");
}

int alignment_class(std::initializer_list<const void*> pointers) noexcept {
  int alignment = kMaxAlignmentClass;
  for (const void* p : pointers) {
    const auto address = reinterpret_cast<std::uintptr_t>(p);
    while (alignment > 1 && address % static_cast<std::uintptr_t>(alignment) != 0) alignment /= 2;
  }
  return alignment;
}

std::size_t GemmKeyHash::operator()(const GemmKey& key) const noexcept {
  // FNV-1a over the fields; the key has no padding-free representation to hash as bytes.
  std::uint64_t h = 1469598103934665603ull;
  const auto mix = [&h](std::uint64_t v) {
    h ^= v;
    h *= 1099511628211ull;
  };
  mix(static_cast<std::uint64_t>(key.op) | static_cast<std::uint64_t>(key.transa) << 8 |
      static_cast<std::uint64_t>(key.transb) << 16 | static_cast<std::uint64_t>(key.a_type) << 24 |
      static_cast<std::uint64_t>(key.b_type) << 32 | static_cast<std::uint64_t>(key.c_type) << 40 |
      static_cast<std::uint64_t>(key.epilogue) << 48 | static_cast<std::uint64_t>(key.tf32) << 56 |
      static_cast<std::uint64_t>(key.scale_a_mode) << 57 | static_cast<std::uint64_t>(key.scale_b_mode) << 60);
  for (const std::int64_t v : {key.m, key.n, key.k, key.lda, key.ldb, key.ldc, key.batch,
                               key.stride_a, key.stride_b, key.stride_c}) {
    mix(static_cast<std::uint64_t>(v));
  }
  mix(key.workspace_bytes);
  mix(static_cast<std::uint64_t>(key.alignment) << 32 | static_cast<std::uint32_t>(key.sm_count));
  return static_cast<std::size_t>(h);
}

}  // namespace cudakit::tunable
