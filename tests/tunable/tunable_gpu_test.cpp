// GPU tier: TunableOp's GEMMs against a CPU reference in every dtype, layout, batch, epilogue and
// FP8; every candidate a tuning times; results files round-tripped and re-checked under other
// validators; graph capture; tensor::matmul routed through tuning.

#include <cuda_fp8.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "cudakit/core/detail/text_file.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/core/stream.hpp"
#include "cudakit/core/stream_guard.hpp"
#include "cudakit/graphs/graph.hpp"
#include "cudakit/graphs/graph_capture.hpp"
#include "cudakit/memory/device_allocator.hpp"
#include "cudakit/tensor/cublas_workspace.hpp"
#include "cudakit/tensor/factories.hpp"
#include "cudakit/tensor/matmul.hpp"
#include "cudakit/tunable/gemm.hpp"
#include "cudakit/tunable/tolerance.hpp"
#include "cudakit/tunable/tunable.hpp"
#include "support/gpu_test.hpp"
#include "tunable/tuning_gpu_fixture.hpp"
#include "tunable/detail/gemv.hpp"
#include "tunable/detail/lt_gemm.hpp"

namespace {

using namespace cudakit;
using namespace cudakit::tunable;
using tensor::Device;
using tensor::DType;
using tensor::Tensor;

DType tensor_type(GemmDType t) {
  switch (t) {
    case GemmDType::float16: return DType::float16;
    case GemmDType::bfloat16: return DType::bfloat16;
    case GemmDType::float64: return DType::float64;
    default: return DType::float32;
  }
}

// A device buffer of `count` random values of `dtype` in [-1, 1] (FP8: small integers, exact),
// with the values as stored (after rounding) on the host.
struct Operand {
  Tensor t;
  std::vector<double> values;
};

Operand random_operand(std::size_t count, GemmDType dtype, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  Operand o;
  if (is_float8(dtype)) {
    std::vector<std::uint8_t> bytes(count);
    o.values.resize(count);
    for (std::size_t i = 0; i < count; ++i) {
      const float v = static_cast<float>(static_cast<int>(gen() % 5) - 2);
      if (dtype == GemmDType::float8_e4m3) {
        const __nv_fp8_e4m3 f(v);
        bytes[i] = f.__x;
      } else {
        const __nv_fp8_e5m2 f(v);
        bytes[i] = f.__x;
      }
      o.values[i] = v;
    }
    o.t = tensor::from_host(bytes, {static_cast<std::int64_t>(count)}, Device::cuda());
    return o;
  }
  std::vector<float> v(count);
  for (float& x : v) x = dist(gen);
  o.t = tensor::from_host(v, {static_cast<std::int64_t>(count)}, Device::cuda()).to(tensor_type(dtype));
  o.values = o.t.to_vector<double>();
  return o;
}

std::size_t span(std::int64_t rows, std::int64_t cols, std::int64_t ld, std::int64_t batch, std::int64_t stride) {
  return static_cast<std::size_t>(ld * (cols - 1) + rows + (batch - 1) * stride);
}

double gelu(double x) { return 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))); }

// D = act(alpha op(A) op(B) * scales + bias), column-major, on the host in double.
std::vector<double> reference(const GemmKey& key, const std::vector<double>& a, const std::vector<double>& b,
                              const std::vector<double>* bias, double alpha, double scale) {
  std::vector<double> c(span(key.m, key.n, key.ldc, key.batch, key.stride_c), 0.0);
  for (std::int64_t p = 0; p < key.batch; ++p) {
    for (std::int64_t j = 0; j < key.n; ++j) {
      for (std::int64_t i = 0; i < key.m; ++i) {
        double sum = 0;
        for (std::int64_t l = 0; l < key.k; ++l) {
          const double x = a[p * key.stride_a + (key.transa == 'n' ? i + l * key.lda : l + i * key.lda)];
          const double y = b[p * key.stride_b + (key.transb == 'n' ? l + j * key.ldb : j + l * key.ldb)];
          sum += x * y;
        }
        double v = alpha * scale * sum;
        if (bias) v += (*bias)[i];
        if (key.epilogue == Epilogue::relu || key.epilogue == Epilogue::bias_relu) v = std::max(v, 0.0);
        if (key.epilogue == Epilogue::gelu || key.epilogue == Epilogue::bias_gelu) v = gelu(v);
        c[p * key.stride_c + i + j * key.ldc] = v;
      }
    }
  }
  return c;
}

// The worst tolerance ratio of `got` against `ref` over the key's output elements, with the
// tuner's tolerance widened 4x (the reference is exact, not another rounding of the same sums).
double worst_ratio(const GemmKey& key, const std::vector<double>& got, const std::vector<double>& ref) {
  Tolerance t = gemm_tolerance(key);
  t.rtol *= 4;
  t.atol *= 4;
  double squares = 0;
  std::size_t count = 0;
  for (std::int64_t p = 0; p < key.batch; ++p)
    for (std::int64_t j = 0; j < key.n; ++j)
      for (std::int64_t i = 0; i < key.m; ++i, ++count) {
        const double r = ref[p * key.stride_c + i + j * key.ldc];
        squares += r * r;
      }
  const double rms = std::sqrt(squares / static_cast<double>(count));
  double worst = 0;
  for (std::int64_t p = 0; p < key.batch; ++p)
    for (std::int64_t j = 0; j < key.n; ++j)
      for (std::int64_t i = 0; i < key.m; ++i) {
        const std::size_t o = p * key.stride_c + i + j * key.ldc;
        const double ratio = tolerance_ratio(got[o], ref[o], rms, t);
        worst = std::isnan(ratio) ? INFINITY : std::max(worst, ratio);
      }
  return worst;
}

// One problem with its operands, run through gemm() or one solution.
struct Problem {
  GemmKey key;
  Operand a, b, bias;
  Tensor c;
  Tensor scales;
  double alpha = 1;

  explicit Problem(const GemmKey& k, unsigned seed = 1) : key(k) {
    a = random_operand(span(k.transa == 'n' ? k.m : k.k, k.transa == 'n' ? k.k : k.m, k.lda, k.batch, k.stride_a),
                       k.a_type, seed);
    b = random_operand(span(k.transb == 'n' ? k.k : k.n, k.transb == 'n' ? k.n : k.k, k.ldb, k.batch, k.stride_b),
                       k.b_type, seed + 1);
    if (has_bias(k.epilogue)) bias = random_operand(static_cast<std::size_t>(k.m), k.c_type, seed + 2);
    c = tensor::zeros({static_cast<std::int64_t>(span(k.m, k.n, k.ldc, k.batch, k.stride_c))},
                      {tensor_type(k.c_type), Device::cuda()});
    if (k.op == GemmOp::scaled_gemm) {  // two 16-byte slots (kScaleAlignment)
      scales = tensor::from_host(std::vector<float>{0.5f, 0, 0, 0, 4.0f, 0, 0, 0}, {8}, Device::cuda());
    }
  }
  GemmArgs args() const {
    GemmArgs g;
    g.key = key;
    g.a = a.t.data_ptr();
    g.b = b.t.data_ptr();
    g.c = c.data_ptr();
    g.bias = bias.t.defined() ? bias.t.data_ptr() : nullptr;
    if (scales.defined()) {
      g.scale_a = static_cast<const float*>(scales.data_ptr());
      g.scale_b = g.scale_a + kScaleAlignment / sizeof(float);
    }
    g.alpha = alpha;
    return g;
  }
  std::vector<double> expected() const {
    const double scale = key.op == GemmOp::scaled_gemm ? 2.0 : 1.0;
    return reference(key, a.values, b.values, bias.t.defined() ? &bias.values : nullptr, alpha, scale);
  }
  double worst() const { return worst_ratio(key, c.to_vector<double>(), expected()); }
};

GemmKey plain(GemmDType t, char ta, char tb, std::int64_t m, std::int64_t n, std::int64_t k) {
  GemmKey key;
  key.transa = ta;
  key.transb = tb;
  key.m = m;
  key.n = n;
  key.k = k;
  key.lda = ta == 'n' ? m : k;
  key.ldb = tb == 'n' ? k : n;
  key.ldc = m;
  key.a_type = key.b_type = key.c_type = t;
  return key;
}

using TunableGpu = cudakit::testing::TuningGpuTest;

TEST_F(TunableGpu, EveryDtypeAndLayoutMatchesTheReference) {
  for (const GemmDType t : {GemmDType::float32, GemmDType::float16, GemmDType::bfloat16, GemmDType::float64}) {
    for (const char* layout : {"nn", "nt", "tn", "tt"}) {
      GemmKey key = plain(t, layout[0], layout[1], 96, 80, 264);
      SCOPED_TRACE(key.op_name());
      Problem p(key);
      p.alpha = 0.75;
      gemm(p.args());
      EXPECT_LE(p.worst(), 1.0);
    }
  }
  EXPECT_EQ(get_results().size(), 16u);
}

TEST_F(TunableGpu, Tf32IsOptIn) {
  GemmKey key = plain(GemmDType::float32, 'n', 'n', 128, 128, 512);
  key.tf32 = true;
  Problem p(key);
  gemm(p.args());
  EXPECT_LE(p.worst(), 1.0);
  EXPECT_NE(get_results().begin()->first.find("_tf32_"), std::string::npos);
}

TEST_F(TunableGpu, EveryCandidateOfADecodeShapeIsRight) {
  // n = 8: cudakit's GEMV competes (A K-contiguous: transa = t).
  for (const GemmDType t : {GemmDType::bfloat16, GemmDType::float16, GemmDType::float32}) {
    GemmKey key = plain(t, 't', 'n', 1024, 8, 2048);
    SCOPED_TRACE(key.op_name());
    Problem p(key);
    key = complete_key(p.args());
    const TuningReport report = tune(key);
    ASSERT_GE(report.candidates.size(), 3u);
    bool saw_gemv = false;
    for (const Solution& s : report.candidates) {
      SCOPED_TRACE(s.name());
      saw_gemv |= s.kind == Solution::Kind::gemv;
      p.c.zero_();
      gemm_with_solution(p.args(), s);
      EXPECT_LE(p.worst(), 1.0);
    }
    EXPECT_TRUE(saw_gemv);
    EXPECT_GT(report.default_ms, 0);
    EXPECT_LE(report.chosen_ms, report.default_ms);
  }
}

TEST_F(TunableGpu, GemvHandlesSmallMWithBAsTheBigOperand) {
  for (const std::int64_t m : {1, 3, 16}) {
    GemmKey key = plain(GemmDType::bfloat16, 'n', 'n', m, 2048, 1024);
    Problem p(key);
    Solution gemv;
    gemv.kind = Solution::Kind::gemv;
    for (const int splits : {1, 4}) {
      gemv.gemv_splits = splits;
      p.c.zero_();
      gemm_with_solution(p.args(), gemv);
      EXPECT_LE(p.worst(), 1.0) << "m " << m << " splits " << splits;
    }
  }
}

// Every decode-size kernel variant there is (not only those the tuner offers): each kernel,
// rows-per-block and split count, 2 and 3 splits included (a split count that does not divide k).
std::vector<Solution> every_gemv_solution() {
  std::vector<Solution> all;
  for (const int splits : {1, 2, 3, 4, 8}) {
    all.push_back(Solution::gemv(GemvKernel::split_k, 0, splits));
    for (const int rows : {4, 8}) all.push_back(Solution::gemv(GemvKernel::stream, rows, splits));
    for (const int rows : {16, 32}) all.push_back(Solution::gemv(GemvKernel::mma, rows, splits));
  }
  return all;
}

// The big operand A (transa = t, n = s <= 16) or B (transb = n, m = s), the small one in either
// layout, with `rows` rows of length k.
GemmKey decode_key(GemmDType t, bool a_big, char small_trans, std::int64_t rows, std::int64_t s, std::int64_t k) {
  return a_big ? plain(t, 't', small_trans, rows, s, k) : plain(t, small_trans, 'n', s, rows, k);
}

// Runs every applicable GEMV variant on `p` against the host reference; returns how many ran.
int check_every_gemv(Problem& p) {
  const std::vector<double> want = p.expected();
  const GemmKey full = complete_key(p.args());
  int ran = 0;
  for (const Solution& s : every_gemv_solution()) {
    if (!tunable::detail::gemv_applicable(full, s)) continue;
    SCOPED_TRACE(s.name());
    p.c.zero_();
    gemm_with_solution(p.args(), s);
    EXPECT_LE(worst_ratio(p.key, p.c.to_vector<double>(), want), 1.0);
    ++ran;
  }
  return ran;
}

TEST_F(TunableGpu, EveryDecodeKernelMatchesTheReferenceInEveryDtypeLayoutAndWidth) {
  // Rows not a multiple of 16 or 32 (the last block's rows are clamped); k = 1000: 16-byte rows
  // with a partial last chunk; k = 1003: rows that are not 16-byte aligned (the element path).
  struct Size {
    std::int64_t rows, k;
  };
  for (const GemmDType t : {GemmDType::bfloat16, GemmDType::float16, GemmDType::float32}) {
    for (std::int64_t s = 1; s <= 16; ++s) {
      if (t != GemmDType::bfloat16 && s != 1 && s != 3 && s != 4 && s != 8 && s != 9 && s != 16) continue;
      for (const bool a_big : {true, false}) {
        for (const char small_trans : {'n', 't'}) {
          for (const Size size : {Size{203, 1000}, Size{45, 1003}}) {
            const GemmKey key = decode_key(t, a_big, small_trans, size.rows, s, size.k);
            SCOPED_TRACE(key.op_name() + " " + key.signature());
            Problem p(key, static_cast<unsigned>(s));
            p.alpha = 0.5;
            // GemvStream_r4 and (16-bit) GemvMma at every split count at least; Gemv_k only
            // for 16-byte rows, GemvStream_r8 only up to s = 8.
            EXPECT_GE(check_every_gemv(p), t == GemmDType::float32 ? 5 : 15);
          }
        }
      }
    }
  }
}

TEST_F(TunableGpu, DecodeKernelsHandleBatchesAndOffsetPointers) {
  for (const GemmDType t : {GemmDType::bfloat16, GemmDType::float16, GemmDType::float32}) {
    GemmKey key = plain(t, 't', 'n', 300, 5, 512);
    key.op = GemmOp::gemm_strided_batched;
    key.batch = 3;
    key.stride_a = 300 * 512 + 8;
    key.stride_b = 0;  // one small operand for every batch
    key.stride_c = 300 * 5;
    SCOPED_TRACE(key.op_name());
    Problem p(key, 7);
    EXPECT_GE(check_every_gemv(p), t == GemmDType::float32 ? 15 : 25);
    // A pointer one element past an allocation's start: 2- or 4-byte aligned, the element path.
    GemmKey one = plain(t, 't', 'n', 130, 3, 256);
    Problem q(one, 9);
    const std::size_t size = element_size(t);
    Tensor shifted = tensor::zeros({static_cast<std::int64_t>(q.a.values.size() + 1)}, {q.a.t.dtype(), Device::cuda()});
    CUDAKIT_CHECK_CUDA(cudaMemcpy(static_cast<char*>(shifted.data_ptr()) + size, q.a.t.data_ptr(),
                                  q.a.values.size() * size, cudaMemcpyDeviceToDevice));
    GemmArgs g = q.args();
    g.a = static_cast<const char*>(shifted.data_ptr()) + size;
    EXPECT_LT(complete_key(g).alignment, 16);
    const std::vector<double> want = q.expected();
    for (const Solution& s : every_gemv_solution()) {
      if (!tunable::detail::gemv_applicable(complete_key(g), s)) continue;
      SCOPED_TRACE(s.name());
      q.c.zero_();
      gemm_with_solution(g, s);
      EXPECT_LE(worst_ratio(one, q.c.to_vector<double>(), want), 1.0);
    }
  }
}

TEST_F(TunableGpu, DecodeKernelsAreBitwiseReproducible) {
  GemmKey key = plain(GemmDType::bfloat16, 't', 'n', 4096, 16, 4096);
  Problem p(key, 11);
  for (const Solution& s : every_gemv_solution()) {
    if (!tunable::detail::gemv_applicable(complete_key(p.args()), s)) continue;
    SCOPED_TRACE(s.name());
    p.c.zero_();
    gemm_with_solution(p.args(), s);
    const std::vector<double> first = p.c.to_vector<double>();
    for (int i = 0; i < 3; ++i) gemm_with_solution(p.args(), s);
    EXPECT_EQ(p.c.to_vector<double>(), first);
  }
}

TEST_F(TunableGpu, StridedBatchedMatchesTheReference) {
  GemmKey key = plain(GemmDType::bfloat16, 'n', 't', 64, 48, 128);
  key.op = GemmOp::gemm_strided_batched;
  key.batch = 3;
  key.stride_a = 64 * 128 + 8;
  key.stride_b = 0;  // one B for every batch
  key.stride_c = 64 * 48;
  Problem p(key);
  gemm(p.args());
  EXPECT_LE(p.worst(), 1.0);
}

TEST_F(TunableGpu, EpiloguesMatchTheReference) {
  for (const Epilogue e : {Epilogue::bias, Epilogue::relu, Epilogue::bias_relu, Epilogue::gelu, Epilogue::bias_gelu}) {
    GemmKey key = plain(GemmDType::bfloat16, 't', 'n', 256, 64, 512);
    key.op = GemmOp::gemm_and_bias;
    key.epilogue = e;
    SCOPED_TRACE(std::string(epilogue_name(e)));
    Problem p(key);
    gemm(p.args());
    EXPECT_LE(p.worst(), 1.0);
    // The decode-size GEMV applies the same epilogue.
    GemmKey decode = key;
    decode.n = 4;
    Problem q(decode);
    EXPECT_GE(check_every_gemv(q), 25);
  }
}

TEST_F(TunableGpu, ScaledFp8MatchesTheReferenceAndNeedsTn) {
  if (get_device_capability().first < 9) GTEST_SKIP() << "FP8 GEMMs need compute capability 8.9+ (Hopper here)";
  for (const GemmDType out : {GemmDType::bfloat16, GemmDType::float16, GemmDType::float32}) {
    for (const GemmDType b : {GemmDType::float8_e5m2, GemmDType::float8_e4m3}) {
      GemmKey key = plain(GemmDType::float8_e4m3, 't', 'n', 128, 64, 64);
      key.op = GemmOp::scaled_gemm;
      key.b_type = b;
      key.c_type = out;
      SCOPED_TRACE(key.op_name());
      Problem p(key);
      gemm(p.args());  // tuned: Default and every cuBLASLt candidate with the scales set
      EXPECT_LE(p.worst(), 1.0);
      // Every candidate the tuning kept runs with the call's scales.
      const TuningReport report = tune(complete_key(p.args()));
      for (const Solution& s : report.candidates) {
        SCOPED_TRACE(s.name());
        p.c.zero_();
        gemm_with_solution(p.args(), s);
        EXPECT_LE(p.worst(), 1.0);
      }
    }
  }
  // Refused before cuBLASLt is called, naming what is wrong.
  const auto refusal = [](const GemmKey& key) -> std::string {
    Problem p(key);
    try {
      gemm(p.args());
    } catch (const InvalidArgumentError& e) {
      return e.what();
    }
    return "accepted";
  };
  GemmKey odd_k = plain(GemmDType::float8_e4m3, 't', 'n', 128, 64, 72);
  odd_k.op = GemmOp::scaled_gemm;
  odd_k.c_type = GemmDType::bfloat16;
  odd_k.lda = odd_k.ldb = 80;  // 16-byte leading dimensions: only k is wrong
  EXPECT_NE(refusal(odd_k).find("k to be a multiple of 16"), std::string::npos) << refusal(odd_k);
  GemmKey nn = plain(GemmDType::float8_e4m3, 'n', 'n', 128, 64, 64);
  nn.op = GemmOp::scaled_gemm;
  nn.c_type = GemmDType::bfloat16;  // valid but for the layout
  EXPECT_NE(refusal(nn).find("TN layout"), std::string::npos) << refusal(nn);
  // Scales 4 bytes apart: cublasLtMatmul would answer NOT_SUPPORTED (see kScaleAlignment).
  GemmKey tn = plain(GemmDType::float8_e4m3, 't', 'n', 128, 64, 64);
  tn.op = GemmOp::scaled_gemm;
  tn.c_type = GemmDType::bfloat16;
  const Problem misaligned(tn);
  GemmArgs g = misaligned.args();
  g.scale_b = g.scale_a + 1;
  try {
    gemm(g);
    ADD_FAILURE() << "a scale off its 16-byte boundary was accepted";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("scale_b at 0x"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("4 bytes past a 16-byte boundary"), std::string::npos) << e.what();
  }
}

TEST_F(TunableGpu, NeighboursOfTheHeuristicAreNewConfigurationsAndRight) {
  // Operands from the caching allocator: 256-byte aligned or better, the largest class.
  Problem p(plain(GemmDType::bfloat16, 'n', 'n', 512, 384, 1024));
  const GemmKey key = complete_key(p.args());
  EXPECT_EQ(key.alignment, kMaxAlignmentClass);
  const tunable::detail::LtDescriptors d(key);
  std::vector<LtAlgoConfig> seeds;
  for (const tunable::detail::LtAlgo& algo : tunable::detail::heuristic_algos(d, 32)) seeds.push_back(algo.config);
  ASSERT_FALSE(seeds.empty());
  const std::vector<tunable::detail::LtAlgo> neighbours = tunable::detail::neighbour_algos(d, seeds, seeds, 24);
  // Hopper's kernels take thread-block clusters: some other cluster shape or swizzle of the
  // heuristic's first choices runs here.
  if (get_device_capability().first >= 9) EXPECT_FALSE(neighbours.empty());
  EXPECT_LE(neighbours.size(), 24u);
  for (const tunable::detail::LtAlgo& n : neighbours) {
    Solution s;
    s.kind = Solution::Kind::lt;
    s.lt = n.config;
    SCOPED_TRACE(s.name());
    EXPECT_EQ(std::find(seeds.begin(), seeds.end(), n.config), seeds.end());
    p.c.zero_();
    gemm_with_solution(p.args(), s);
    EXPECT_LE(p.worst(), 1.0);
  }
}

TEST_F(TunableGpu, ResultsRoundTripThroughAFile) {
  const std::string path = (std::filesystem::temp_directory_path() / "cudakit_tunable_roundtrip%d.csv").string();
  const std::string file = device_filename(path, current_device());
  std::filesystem::remove(file);
  set_filename(path);
  GemmKey key = plain(GemmDType::float16, 'n', 'n', 512, 512, 512);
  Problem p(key);
  gemm(p.args());
  const auto results = get_results();
  ASSERT_EQ(results.size(), 1u);
  // Appended as found: the file has it already, with the validators first.
  const std::string text = cudakit::detail::read_text_file(file, "test");
  EXPECT_EQ(text.rfind("Validator,CUDAKIT_VERSION,", 0), 0u);
  EXPECT_NE(text.find(results.begin()->first), std::string::npos);
  write_file();
  clear_results();
  EXPECT_TRUE(get_results().empty());
  ASSERT_TRUE(read_file());
  EXPECT_EQ(get_results(), results);
  std::filesystem::remove(file);
}

// A results file torch's TunableOp wrote at cudakit's file name (or torch's own name given to
// both) is left to torch: not rewritten, no .bak, no line appended; the tuned result stays in
// memory and is used.
TEST_F(TunableGpu, AFileTorchWroteIsLeftAlone) {
  const std::string path = (std::filesystem::temp_directory_path() / "cudakit_tunable_torch%d.csv").string();
  const std::string file = device_filename(path, current_device());
  const std::string torch_text =
      "Validator,PT_VERSION,2.11.0\nValidator,CUBLASLT_VERSION,130100\n"
      "GemmTunableOp_Half_NN,nn_512_512_512_ld_512_512_512,Default,0.05\n";
  cudakit::detail::write_text_file(file, torch_text, "test");
  std::filesystem::remove(file + ".bak");
  set_filename(path);
  Problem p(plain(GemmDType::float16, 'n', 'n', 512, 512, 512));
  gemm(p.args());
  EXPECT_EQ(get_results().size(), 1u);
  EXPECT_EQ(cudakit::detail::read_text_file(file, "test"), torch_text);
  EXPECT_FALSE(std::filesystem::exists(file + ".bak"));
  EXPECT_LE(p.worst(), 1.0);
  std::filesystem::remove(file);
}

TEST_F(TunableGpu, OtherValidatorsRecheckEntriesKeepValidOnesAndSaveTheOldFile) {
  GemmKey key = plain(GemmDType::bfloat16, 'n', 'n', 256, 256, 256);
  Problem p(key);
  const GemmKey full = complete_key(p.args());
  const TuningReport report = tune(full);
  // One valid cuBLASLt entry (any the tuning timed) and one no cuBLASLt has.
  Solution valid = report.chosen;
  for (const Solution& s : report.candidates) {
    if (s.kind == Solution::Kind::lt) valid = s;
  }
  ASSERT_EQ(valid.kind, Solution::Kind::lt);
  GemmKey other = full;
  other.k = 320;
  Solution bogus;
  bogus.kind = Solution::Kind::lt;
  bogus.lt.algo_id = 99999;
  std::vector<Validator> validators = get_validators();
  for (Validator& v : validators) {
    if (v.name == "CUBLASLT_VERSION") v.value = "1";
  }
  const std::string path = (std::filesystem::temp_directory_path() / "cudakit_tunable_mismatch.csv").string();
  std::filesystem::remove(path + ".bak");
  const std::string old_text = format_results_file(validators, {{full, valid, 0.1}, {other, bogus, 0.1}});
  cudakit::detail::write_text_file(path, old_text, "test");
  clear_results();
  ASSERT_TRUE(read_file(path));
  const auto results = get_results();
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results.begin()->first, full.op_name() + "," + full.signature());
  EXPECT_EQ(results.begin()->second.substr(0, valid.name().size()), valid.name());
  EXPECT_EQ(cudakit::detail::read_text_file(path + ".bak", "test"), old_text);
  const ResultsFileContents rewritten = parse_results_file(cudakit::detail::read_text_file(path, "test"));
  EXPECT_EQ(rewritten.validators, get_validators());
  EXPECT_EQ(rewritten.results.size(), 1u);
  std::filesystem::remove(path);
  std::filesystem::remove(path + ".bak");
}

TEST_F(TunableGpu, CaptureRunsDefaultRecordsUntunedAndReplaysTunedGemms) {
  const std::string untuned = (std::filesystem::temp_directory_path() / "cudakit_tunable_untuned%d.csv").string();
  const std::string untuned_file = device_filename(untuned, current_device());
  std::filesystem::remove(untuned_file);
  TuningOptions o = options();
  o.record_untuned = true;
  o.untuned_filename = untuned;
  set_options(o);
  Stream stream;
  GemmKey tuned_key = plain(GemmDType::bfloat16, 't', 'n', 512, 128, 256);
  GemmKey new_key = plain(GemmDType::bfloat16, 't', 'n', 384, 128, 256);
  Problem tuned(tuned_key, 3), fresh(new_key, 5);
  gemm(tuned.args(), stream.ref());  // tuned eagerly
  stream.synchronize();
  ASSERT_EQ(get_results().size(), 1u);
  tuned.c.zero_(stream.ref());
  stream.synchronize();

  {
    StreamGuard on(stream);
    graphs::Graph graph;
    {
      graphs::GraphCapture capture(graph);
      gemm(tuned.args());
      gemm(fresh.args());
    }
    EXPECT_EQ(get_results().size(), 1u);  // nothing tuned during the capture
    graph.replay();
    stream.synchronize();
    EXPECT_LE(tuned.worst(), 1.0);
    EXPECT_LE(fresh.worst(), 1.0);
  }
  const UntunedFileContents recorded = parse_untuned_file(cudakit::detail::read_text_file(untuned_file, "test"));
  ASSERT_EQ(recorded.keys.size(), 1u);
  EXPECT_EQ(recorded.keys[0].m, 384);
  // Outside the capture the recorded key is tuned at its next call.
  gemm(fresh.args(), stream.ref());
  stream.synchronize();
  EXPECT_EQ(get_results().size(), 2u);
  std::filesystem::remove(untuned_file);
}

// The GEMMs of one capture: cuBLAS's default (tunable off), a tuned one (tuned eagerly, then
// captured), a split-K GEMV and a cuBLASLt configuration with a workspace. Each uses memory its
// capture allocated and freed: cuBLAS's capture workspace, a workspace per call.
struct CapturedGemms {
  Problem dflt{plain(GemmDType::bfloat16, 'n', 'n', 512, 384, 1024), 21};
  Problem tuned{plain(GemmDType::bfloat16, 't', 'n', 768, 256, 512), 23};
  Problem decode{plain(GemmDType::bfloat16, 't', 'n', 2048, 8, 4096), 25};
  Problem split{plain(GemmDType::bfloat16, 't', 'n', 256, 256, 8192), 27};
  Solution gemv = Solution::gemv(GemvKernel::mma, 16, 4);
  std::optional<Solution> lt;  // a cuBLASLt configuration that takes a workspace, where one runs

  CapturedGemms() {
    const tunable::detail::LtDescriptors d(complete_key(split.args()));
    std::vector<tunable::detail::LtAlgo> algos = tunable::detail::heuristic_algos(d, 32);
    for (tunable::detail::LtAlgo& a : tunable::detail::enumerated_algos(d, {}, 64)) algos.push_back(a);
    for (const tunable::detail::LtAlgo& a : algos) {
      if (a.workspace_bytes == 0) continue;
      Solution s;
      s.kind = Solution::Kind::lt;
      s.lt = a.config;
      lt = s;
      break;
    }
  }
  void run(bool with_default) {
    if (with_default) {
      enable(false);
      gemm(dflt.args());
      enable(true);
    }
    gemm(tuned.args());
    gemm_with_solution(decode.args(), gemv);
    if (lt) gemm_with_solution(split.args(), *lt);
  }
  std::vector<Problem*> all() { return {&dflt, &tuned, &decode, &split}; }
};

// See Note [A graph's pool keeps its free memory]: cudakit.graph and torch.cuda.graph empty the
// cache before each capture, which returned the first graph's freed workspaces to the driver
// while its replays still used them (torch_gemm_interleaved.py's graphs: "unspecified launch
// failure" on every shape).
TEST_F(TunableGpu, CapturedDefaultAndTunedGemmsReplayRightAfterTheCacheIsEmptied) {
  Stream stream;
  StreamGuard on(stream);
  CapturedGemms g;
  g.run(true);  // eager: tunes `tuned`, makes every plan
  stream.synchronize();
  ASSERT_EQ(get_results().size(), 1u);
  // One graph with Default alone (tunable off for the whole capture), one with the others.
  // Each switch of TunableOp makes plans anew: made eagerly before each capture, as a program's
  // warm-up would.
  graphs::Graph plain_graph, tuned_graph;
  enable(false);
  gemm(g.dflt.args());
  {
    graphs::GraphCapture capture(plain_graph);
    gemm(g.dflt.args());
  }
  enable(true);
  g.run(false);
  stream.synchronize();
  memory::empty_cache();  // what the next capture's cudakit.graph does first
  {
    graphs::GraphCapture capture(tuned_graph);
    g.run(false);
  }
  memory::CachingAllocator& allocator = memory::device_allocator();
  const std::size_t plain_reserved = allocator.pool_reserved_bytes(plain_graph.pool());
  const std::size_t tuned_reserved = allocator.pool_reserved_bytes(tuned_graph.pool());
  memory::empty_cache();
  ASSERT_GE(plain_reserved, allocator.pool_allocated_bytes(plain_graph.pool()) + tensor::cublas_workspace_size())
      << "cuBLAS's capture workspace was returned to the driver while the graph uses it";
  ASSERT_EQ(allocator.pool_reserved_bytes(plain_graph.pool()), plain_reserved);
  ASSERT_EQ(allocator.pool_reserved_bytes(tuned_graph.pool()), tuned_reserved)
      << "the workspaces the tuned graph's capture freed were returned to the driver";
  for (int round = 0; round < 3; ++round) {
    for (Problem* p : g.all()) p->c.zero_();
    for (int i = 0; i < 100; ++i) {
      plain_graph.replay();
      tuned_graph.replay();
    }
    stream.synchronize();
    for (Problem* p : g.all()) {
      SCOPED_TRACE(p->key.op_name() + " " + p->key.signature() + " round " + std::to_string(round));
      if (p == &g.split && !g.lt) continue;
      EXPECT_LE(p->worst(), 1.0);
    }
  }
  EXPECT_TRUE(g.lt.has_value()) << "no cuBLASLt configuration with a workspace ran here";
}

TEST_F(TunableGpu, MatmulIsRoutedThroughTuning) {
  const Tensor a = tensor::from_host(std::vector<float>(64 * 96, 0.25f), {64, 96}, Device::cuda()).to(DType::bfloat16);
  const Tensor b = tensor::from_host(std::vector<float>(96 * 32, 0.5f), {96, 32}, Device::cuda()).to(DType::bfloat16);
  const Tensor c = tensor::matmul(a, b);
  for (const double v : c.to_vector<double>()) ASSERT_DOUBLE_EQ(v, 96 * 0.125);
  const auto results = get_results();
  ASSERT_EQ(results.size(), 1u);
  // torch's key for this matmul: C^T = B^T A^T, "nn_32_64_96".
  EXPECT_EQ(results.begin()->first.rfind("GemmTunableOp_BFloat16_NN,nn_32_64_96_ld_32_96_32_", 0), 0u)
      << results.begin()->first;
  enable(false);
  const Tensor d = tensor::matmul(a, b);  // cuBLAS directly, no new result
  for (const double v : d.to_vector<double>()) ASSERT_DOUBLE_EQ(v, 96 * 0.125);
}

TEST_F(TunableGpu, TuningAShapeStaysWithinItsBudget) {
  TuningOptions o = options();
  o.max_shape_tuning_ms = 2000;
  set_options(o);
  GemmArgs g;
  g.key = plain(GemmDType::bfloat16, 't', 'n', 4096, 4096, 4096);
  const TuningReport report = tune(complete_key(g));
  EXPECT_LT(report.tuning_ms, 2500.0);
  EXPECT_GE(report.candidates.size(), 8u);
  EXPECT_EQ(report.first_heuristic.kind, Solution::Kind::lt);  // cuBLASLt had a first choice
}

}  // namespace
