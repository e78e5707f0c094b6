// Host tier: jiterator kernels generated and compiled to cubins by NVRTC (no GPU needed), for
// many dtype, arity and access combinations; NVRTC's errors with the user's line numbers; type
// promotion; the argument checks that come before any compilation; the variant a call picks and
// the parameters it plans; the function table's last-hit entry; the hash and text helpers.

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <limits>
#include <optional>
#include <set>
#include <thread>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/jiterator/jit_function.hpp"
#include "cudakit/jiterator/jit_reduction.hpp"
#include "cudakit/jiterator/nvrtc_error.hpp"
#include "cudakit/tensor/factories.hpp"
#include "jiterator/detail/call_setup.hpp"
#include "jiterator/detail/code_generator.hpp"
#include "jiterator/detail/hash.hpp"
#include "jiterator/detail/programs.hpp"
#include "jiterator/detail/text.hpp"
#include "support/expect_refused.hpp"
#include "support/scoped_env.hpp"

namespace cudakit::jiterator {
namespace {

using cudakit::testing::expect_refused;
using tensor::DType;

constexpr DType kAllDtypes[] = {DType::float32, DType::float16, DType::bfloat16, DType::float64,
                                DType::int32,   DType::int64,   DType::uint8,    DType::bool_,
                                DType::int8,    DType::int16,   DType::uint16,   DType::uint32,
                                DType::uint64};

// Compiles through the process's kernel store with no disk cache: NVRTC runs (once per source),
// and nothing is written outside the test.
class JitCodeGeneration : public ::testing::Test {
  cudakit::testing::ScopedEnv no_disk_{"CUDAKIT_KERNEL_CACHE_DISABLE", "1"};
};

bool is_cubin(const CompiledKernelInfo& info) { return info.cubin_bytes > 64; }

const JitFunction& axpy() {
  static const JitFunction fn = create_jit_fn(
      "template <typename T> T axpy(T x, T y, T alpha) { return alpha * x + y; }", {{"alpha", 1.0}});
  return fn;
}

TEST_F(JitCodeGeneration, SourcesHaveNoIncludesAndNameTheirVariant) {
  const std::string source = axpy().generated_source(
      {.inputs = {{DType::float16}, {DType::bfloat16}}, .access = OperandAccess::vectorized});
  EXPECT_EQ(source.find("#include"), std::string::npos) << source;
  EXPECT_NE(source.find("vectorized, 32-bit index"), std::string::npos) << source;
  EXPECT_NE(source.find("ck_half"), std::string::npos);
  EXPECT_NE(source.find("ck_bf16"), std::string::npos);
  // float16 with bfloat16 promotes to float32: the output is float, computed in float.
  EXPECT_NE(source.find("float* __restrict__ out0"), std::string::npos) << source;
  EXPECT_NE(source.find("axpy<float>("), std::string::npos) << source;
  // A variant without half types carries no half preamble.
  const std::string plain = axpy().generated_source({.inputs = {{DType::float32}, {DType::float32}}});
  EXPECT_EQ(plain.find("ck_half"), std::string::npos);
}

// Every dtype through every access, as one input against float32 and as a pair of its own.
TEST_F(JitCodeGeneration, CompilesEveryDtypeAndAccessForSm90) {
  for (DType dtype : kAllDtypes) {
    for (OperandAccess access : {OperandAccess::strided, OperandAccess::contiguous, OperandAccess::vectorized}) {
      for (bool index64 : {false, true}) {
        const KernelVariant variant{.inputs = {{dtype}, {DType::float32}}, .access = access, .index64 = index64};
        const CompiledKernelInfo info = axpy().compile(variant, 90);
        EXPECT_TRUE(is_cubin(info)) << tensor::dtype_name(dtype) << " " << to_string(access);
        EXPECT_EQ(info.arch, 90);
      }
    }
    const CompiledKernelInfo same = axpy().compile({.inputs = {{dtype}, {dtype}}, .access = OperandAccess::vectorized}, 90);
    EXPECT_TRUE(is_cubin(same)) << tensor::dtype_name(dtype);
  }
}

TEST_F(JitCodeGeneration, CompilesForOtherArchitecturesWithoutTheirGpus) {
  const KernelVariant variant{.inputs = {{DType::bfloat16}, {DType::float16}}, .access = OperandAccess::strided};
  for (int arch : {75, 80, 86, 89, 90, 100, 120}) {
    EXPECT_TRUE(is_cubin(axpy().compile(variant, arch))) << "sm_" << arch;
  }
}

TEST_F(JitCodeGeneration, CompilesEveryArityWithHostScalarsAndScalarParameters) {
  for (int arity = 1; arity <= 16; ++arity) {
    std::string params, body = "beta";
    for (int i = 0; i < arity; ++i) {
      params += "T x" + std::to_string(i) + ", ";
      body += " + x" + std::to_string(i);
    }
    const JitFunction fn = create_jit_fn("template <typename T> T sum(" + params + "T beta, int n) { return " + body + " * n; }",
                                         {{"beta", 0.5}, {"n", 2}});
    KernelVariant variant;
    for (int i = 0; i < arity; ++i) {
      // Mixed dtypes, every third input a host scalar.
      variant.inputs.push_back({kAllDtypes[i % 8], i % 3 == 2});
    }
    for (OperandAccess access : {OperandAccess::strided, OperandAccess::vectorized}) {
      variant.access = access;
      EXPECT_TRUE(is_cubin(fn.compile(variant, 90))) << arity << " inputs, " << to_string(access) << "\n"
                                                     << fn.generated_source(variant);
    }
  }
}

TEST_F(JitCodeGeneration, CompilesMultiOutputFunctionsWithOutputsOfTheirOwnDtypes) {
  const JitFunction fn = create_multi_output_jit_fn(
      "template <typename T> void sincos(T x, T& s, T& c) { s = sin(x); c = cos(x); }", 2);
  EXPECT_EQ(fn.num_outputs(), 2);
  for (OperandAccess access : {OperandAccess::strided, OperandAccess::contiguous, OperandAccess::vectorized}) {
    const KernelVariant variant{.inputs = {{DType::float16}}, .outputs = {DType::float32, DType::bfloat16}, .access = access};
    EXPECT_TRUE(is_cubin(fn.compile(variant, 90))) << fn.generated_source(variant);
  }
}

TEST_F(JitCodeGeneration, CompilesReductionsOfEveryAccess) {
  const JitReduction sum_of_squares = create_jit_reduction("template <typename T> T square(T x) { return x * x; }",
                                                           "template <typename T> T add(T a, T b) { return a + b; }", "0");
  const JitReduction dot = create_jit_reduction("template <typename T> T mul(T x, T y, T w) { return w * x * y; }",
                                                "template <typename T> T add(T a, T b) { return a + b; }", "0",
                                                {{"w", 1.0f}});
  const JitReduction maximum = create_jit_reduction("template <typename T> T id(T x) { return x; }",
                                                    "template <typename T> T larger(T a, T b) { return a > b ? a : b; }",
                                                    "-__int_as_float(0x7f800000)");
  for (OperandAccess access : {OperandAccess::strided, OperandAccess::contiguous, OperandAccess::vectorized}) {
    for (DType dtype : kAllDtypes) {
      EXPECT_TRUE(is_cubin(sum_of_squares.compile({.inputs = {{dtype}}, .access = access}, 90)))
          << tensor::dtype_name(dtype) << " " << to_string(access);
    }
    EXPECT_TRUE(is_cubin(dot.compile({.inputs = {{DType::float16}, {DType::float32}}, .access = access, .index64 = true}, 90)));
    EXPECT_TRUE(is_cubin(maximum.compile({.inputs = {{DType::bfloat16}}, .access = access}, 90)));
  }
  const std::string source = sum_of_squares.generated_source({.inputs = {{DType::float16}}});
  EXPECT_NE(source.find("float ck_identity()"), std::string::npos) << "half accumulates in float:\n" << source;
}

TEST_F(JitCodeGeneration, CompileErrorsCarryTheLogWithTheUsersLineNumbers) {
  const JitFunction broken = create_jit_fn("template <typename T>\nT f(T a) {\n  return a + undefined_name;\n}");
  try {
    (void)broken.compile({.inputs = {{DType::float32}}}, 90);
    FAIL() << "compiled";
  } catch (const NvrtcError& e) {
    EXPECT_NE(e.log().find("jit_code(3)"), std::string::npos) << e.log();  // line 3 of the user's code
    EXPECT_NE(e.log().find("undefined_name"), std::string::npos) << e.log();
    EXPECT_NE(std::string(e.what()).find("NVRTC_ERROR_COMPILATION"), std::string::npos) << e.what();
    EXPECT_NE(e.source().find("undefined_name"), std::string::npos);
    EXPECT_EQ(e.api(), "nvrtcCompileProgram");
  }
}

TEST(JitTypePromotion, FollowsTorchsRules) {
  using tensor::promote_types;
  EXPECT_EQ(promote_types(DType::float16, DType::bfloat16), DType::float32);
  EXPECT_EQ(promote_types(DType::float16, DType::float32), DType::float32);
  EXPECT_EQ(promote_types(DType::bfloat16, DType::float64), DType::float64);
  EXPECT_EQ(promote_types(DType::int64, DType::float16), DType::float16);
  EXPECT_EQ(promote_types(DType::uint8, DType::int32), DType::int32);
  EXPECT_EQ(promote_types(DType::bool_, DType::uint8), DType::uint8);
  EXPECT_EQ(promote_types(DType::int32, DType::int64), DType::int64);
  EXPECT_EQ(promote_types(DType::bool_, DType::bool_), DType::bool_);
  // Symmetric, refusals included (uint16/32/64 promote with floating types only, as in torch).
  const auto promoted = [](DType a, DType b) -> std::optional<DType> {
    try {
      return promote_types(a, b);
    } catch (const InvalidArgumentError&) {
      return std::nullopt;
    }
  };
  for (DType a : kAllDtypes) {
    for (DType b : kAllDtypes) EXPECT_EQ(promoted(a, b), promoted(b, a));
  }
  EXPECT_EQ(promoted(DType::uint32, DType::int32), std::nullopt);
  using detail::promote;
  const auto of = [](std::vector<InputType> v) { return promote(v); };
  // A host number counts only where its kind is above every tensor's.
  EXPECT_EQ(of({{DType::float16}, {DType::float64, true}}), DType::float16);
  EXPECT_EQ(of({{DType::int32}, {DType::float64, true}}), DType::float32);
  EXPECT_EQ(of({{DType::uint8}, {DType::int64, true}}), DType::uint8);
  EXPECT_EQ(of({{DType::bool_}, {DType::int64, true}}), DType::int64);
  EXPECT_EQ(of({{DType::float64, true}, {DType::int64, true}}), DType::float32);
  EXPECT_EQ(of({{DType::int32}, {DType::bfloat16}}), DType::bfloat16);
}

TEST(JitScalars, ConvertToTheKernelParametersBits) {
  float f = 0;
  const std::uint64_t bits = Scalar(2.5).bits_as(DType::float32);
  std::memcpy(&f, &bits, sizeof f);
  EXPECT_EQ(f, 2.5f);
  EXPECT_EQ(Scalar(7).bits_as(DType::int32), 7u);
  EXPECT_EQ(Scalar(-1).bits_as(DType::int64), ~std::uint64_t{0});
  EXPECT_EQ(Scalar(1.0).bits_as(DType::float16), 0x3c00u);
  EXPECT_EQ(Scalar(1.0).bits_as(DType::bfloat16), 0x3f80u);
  EXPECT_EQ(Scalar(true).bits_as(DType::bool_), 1u);
  EXPECT_EQ(Scalar(3).dtype(), DType::int64);
  EXPECT_EQ(Scalar(3.0f).dtype(), DType::float32);
  EXPECT_EQ(Scalar(false).dtype(), DType::bool_);
}

// The 32-bit path divides by multiply-and-shift: the layout's constants must give n / d for
// every n below 2^31.
TEST(JitLayout, MultiplyAndShiftDividesExactly) {
  for (const std::uint64_t d : std::vector<std::uint64_t>{1, 2, 3, 7, 10, 255, 256, 1000, 65537, (1ull << 31) - 1, 1ull << 31}) {
    tensor::detail::StridedIndexer index;
    index.ndim = 1;
    index.sizes[0] = static_cast<std::int64_t>(d);
    index.strides[0] = 1;
    // Read the constants back out of a layout parameter.
    detail::LaunchParameters parameters;
    parameters.layout(std::span(&index, 1), false);
    const auto* fields = static_cast<const std::uint32_t*>(parameters.data()[0]);
    const std::uint32_t mul = fields[1 + detail::kLayoutDims], shift = fields[1 + 2 * detail::kLayoutDims];
    EXPECT_EQ(fields[1], static_cast<std::uint32_t>(d));
    for (const std::uint64_t n : std::vector<std::uint64_t>{0, 1, d - 1, d, d + 1, 2 * d + 1, 12345678, (1ull << 31) - 1}) {
      if (n >= (1ull << 31)) continue;
      const std::uint32_t hi = static_cast<std::uint32_t>((n * mul) >> 32);
      EXPECT_EQ((hi + n) >> shift, n / d) << n << " / " << d;
    }
  }
}

TEST(JitArguments, AreCheckedBeforeAnyCompilation) {
  const JitFunction& fn = axpy();
  const tensor::Tensor a = tensor::zeros({2, 3});
  const tensor::Tensor b = tensor::zeros({4, 3});
  const tensor::Tensor c = tensor::zeros({3});
  expect_refused([&] { (void)fn.call({a}); }, "takes 2 inputs, got 1");
  expect_refused([&] { (void)fn.call({a, b}); },
                 "input 1 (float32[4, 3] on cpu) does not broadcast with the inputs before it (shapes [2, 3], broadcast to [2, 3])");
  expect_refused([&] { (void)fn.call({a, c}); }, "a tensor input is float32[2, 3] on cpu: runtime-compiled kernels run on CUDA tensors");
  expect_refused([&] { (void)fn.call({1.0, 2.0}, {.scalars = {{"beta", 3}}}); },
                 "unknown scalar parameter `beta` (= 3 (int64)); this function's are: alpha");
  expect_refused([&] { (void)fn.call({1.0, 2.0}); }, "every input is a host scalar");
  // Kernels compute in C++ types: FP8, complex and packed FP4 inputs have none.
  const tensor::Tensor f8 = tensor::zeros({3}, {.dtype = DType::float8_e4m3fn});
  expect_refused([&] { (void)fn.call({f8, c}); }, "is not defined for float8_e4m3fn tensors");
  const tensor::Tensor z = tensor::zeros({3}, {.dtype = DType::complex64});
  expect_refused([&] { (void)fn.call({c, z}); }, "is not defined for complex64 tensors");
  expect_refused([&] { (void)fn.compile({.inputs = {{DType::float32}}}, 90); }, "the variant has 1 inputs, the function takes 2");
  expect_refused([] { (void)create_jit_reduction("template <typename T> T id(T x) { return x; }",
                                                 "template <typename T> T neg(T a) { return -a; }", "0"); },
                 "combine (`neg`) must take two values, it takes 1");
  expect_refused([] { (void)create_multi_output_jit_fn("template <typename T> void f(T a, T& o) { o = a; }", 9); },
                 "num_outputs must be 1 to 8, got 9");
}

// A call's variant is chosen on the host (the plan needs no device): access, index width and
// merged dimensions as the kernel will run them.
TEST(JitVariantChoice, FollowsTheOperandsLayout) {
  const JitFunction& fn = axpy();
  const tensor::Tensor x = tensor::ones({1000}), y = tensor::ones({1000});
  EXPECT_EQ(fn.variant_for({x, y}).access, OperandAccess::vectorized);
  EXPECT_FALSE(fn.variant_for({x, y}).index64);
  const tensor::Tensor base = tensor::ones({1001});
  EXPECT_EQ(fn.variant_for({base.slice(0, 1, 1001), y}).access, OperandAccess::contiguous);  // 4 bytes off
  // A given float16 output narrows nothing: the widest operand (float32) sets the vector width.
  const tensor::Tensor half_out = tensor::empty({1000}, {.dtype = DType::float16});
  const KernelVariant with_half_out = fn.variant_for({x, y}, {.out = {half_out}});
  EXPECT_EQ(with_half_out.access, OperandAccess::vectorized);
  EXPECT_EQ(with_half_out.outputs, (std::vector<DType>{DType::float16}));
  EXPECT_EQ(detail::vector_width(with_half_out), 4);
  // Broadcasting: [4, 1, 5] with [3, 1] is strided over three dimensions (nothing merges).
  const tensor::Tensor a = tensor::ones({4, 1, 5}), b = tensor::ones({3, 1}, {.dtype = DType::float16});
  const KernelVariant broadcast = fn.variant_for({a, b});
  EXPECT_EQ(broadcast.access, OperandAccess::strided);
  EXPECT_EQ(broadcast.dims, 3);
  EXPECT_EQ(broadcast.outputs, (std::vector<DType>{DType::float32}));
  // A [6, 4] with a row of 4 merges nothing either, a transposed [4, 6] neither; a stepped slice
  // of contiguous rows merges into one dimension.
  const tensor::Tensor m = tensor::ones({6, 4});
  EXPECT_EQ(fn.variant_for({m, tensor::ones({4})}).dims, 2);
  EXPECT_EQ(fn.variant_for({tensor::ones({4, 6}).t(), m}).dims, 2);
  const tensor::Tensor stepped = tensor::ones({20}).slice(0, 0, 20, 2);
  const KernelVariant one_dim = fn.variant_for({stepped, tensor::ones({10})});
  EXPECT_EQ(one_dim.access, OperandAccess::strided);
  EXPECT_EQ(one_dim.dims, 1);
  // The planned call: a grid covering every element, and the key of exactly this variant.
  const detail::ElementwiseProgram program("template <typename T> T axpy(T x, T y, T alpha) { return alpha * x + y; }", 1,
                                           {{"alpha", 2.0f}});
  const JitArgument arguments[] = {a, b};
  detail::ElementwisePlan plan;
  program.plan(arguments, {}, plan);
  EXPECT_EQ(*plan.shape, (tensor::Shape{4, 3, 5}));
  EXPECT_EQ(plan.numel, 60);
  EXPECT_EQ(plan.grid, 1);
  EXPECT_EQ(plan.key, detail::make_variant_key(program.variant_of(plan), -1));
  const JitArgument same_shape[] = {x, y};
  detail::ElementwisePlan flat;
  program.plan(same_shape, {}, flat);
  EXPECT_EQ(flat.shape, &x.sizes());  // the first input's shape, not a copy
  EXPECT_EQ(flat.grid, (1000 / 4 + 127) / 128);
  EXPECT_NE(flat.key, plan.key);
  EXPECT_NE(detail::VariantKeyHash{}(flat.key), detail::VariantKeyHash{}(plan.key));
  // The parameters as the kernel reads them: out (set after allocation), x, y, alpha, n.
  void** parameters = flat.parameters.data();
  EXPECT_EQ(*static_cast<const void* const*>(parameters[1]), x.data_ptr());
  EXPECT_EQ(*static_cast<const void* const*>(parameters[2]), y.data_ptr());
  EXPECT_EQ(*static_cast<const float*>(parameters[3]), 2.0f);
  EXPECT_EQ(*static_cast<const std::uint32_t*>(parameters[4]), 1000u);
}

// The table's last-hit entry never hands out another key's function, from one thread or several.
TEST(JitFunctionTableThreads, LastHitEntryGivesEachKeyItsOwnFunction) {
  detail::FunctionTable table;
  std::vector<detail::VariantKey> keys;
  for (int i = 0; i < 8; ++i) {
    KernelVariant v{.inputs = {{kAllDtypes[i]}}, .outputs = {DType::float32}};
    keys.push_back(detail::make_variant_key(v, 0));
  }
  const auto function_of = [](int i) { return reinterpret_cast<CUfunction>(static_cast<std::uintptr_t>(0x1000 + i)); };
  std::atomic<int> made{0};
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 2000; ++round) {
        const int i = (round * (t + 1) + t) % 8;
        const CUfunction f = table.get(keys[i], [&] {
          made.fetch_add(1);
          return function_of(i);
        });
        if (f != function_of(i)) wrong.fetch_add(1);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_GE(made.load(), 8);   // each key made at least once (racing threads may both make one)
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(table.get(keys[i], [] { return CUfunction{}; }), function_of(i)) << i;  // and kept
  }
}

TEST(JitHash, EveryByteAndTheLengthCount) {
  std::string bytes(103, '\0');
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 7 + 1);
  std::set<std::uint64_t> seen{detail::hash_bytes(bytes)};
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    for (int bit = 0; bit < 8; bit += 7) {
      std::string changed = bytes;
      changed[i] = static_cast<char>(changed[i] ^ (1 << bit));
      EXPECT_TRUE(seen.insert(detail::hash_bytes(changed)).second) << "byte " << i << " bit " << bit;
    }
  }
  for (std::size_t n = 0; n < 40; ++n) {
    EXPECT_TRUE(seen.insert(detail::hash_bytes(std::string(n, '\0'))).second) << n << " zero bytes";
  }
  EXPECT_NE(detail::hash_bytes(bytes, 1), detail::hash_bytes(bytes));
  EXPECT_EQ(detail::hash_bytes(bytes), detail::hash_bytes(std::string(bytes)));
}

TEST(JitText, WritesStringsAndIntegersAsConcatDoes) {
  const std::string s = "str";
  const std::int64_t lowest = std::numeric_limits<std::int64_t>::min();
  const std::uint64_t highest = std::numeric_limits<std::uint64_t>::max();
  EXPECT_EQ(detail::text("a", s, std::string_view("v"), 'c', 0, -17, 42u, lowest, highest, std::size_t{9}),
            cudakit::detail::concat("a", s, std::string_view("v"), 'c', 0, -17, 42u, lowest, highest, std::size_t{9}));
  std::string out = "x";
  detail::append(out, 1, "-", 2);
  EXPECT_EQ(out, "x1-2");
}

}  // namespace
}  // namespace cudakit::jiterator
