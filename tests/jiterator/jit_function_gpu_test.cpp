// GPU tier of the jiterator: runtime-compiled kernels against host references — mixed dtypes,
// host scalars, broadcasting, strided and offset views, outputs aliasing inputs, float16 and
// bfloat16, the vectorized and scalar paths, 64-bit indexing past 2^31 elements, several
// outputs, reductions over all or chosen dimensions, and first calls inside a graph capture.

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <vector>

#include "cudakit/core/detail/graph_launcher.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/core/stream.hpp"
#include "cudakit/core/trace_hooks.hpp"
#include "cudakit/jiterator/jit_function.hpp"
#include "cudakit/jiterator/jit_reduction.hpp"
#include "cudakit/random/distributions.hpp"
#include "cudakit/tensor/factories.hpp"
#include "support/expect_refused.hpp"
#include "support/gpu_test.hpp"
#include "support/scoped_env.hpp"

namespace {

namespace jit = cudakit::jiterator;
namespace ten = cudakit::tensor;
using cudakit::testing::expect_refused;
using jit::OperandAccess;
using ten::Device;
using ten::DType;
using ten::Shape;
using ten::Tensor;

const Device kCuda{Device::Type::cuda, 0};
// The kernels these tests compile go to a cache folder of their own, not the user's.
const cudakit::testing::ScopedEnv kKernelCache{"CUDAKIT_KERNEL_CACHE_PATH", "/tmp/cudakit_gpu_test_kernels"};

// Uniform values in [-2, 2) of `dtype`, on the device.
Tensor values(const Shape& shape, DType dtype, std::uint64_t seed) {
  cudakit::random::Generator g(Device::cpu(), seed);
  Tensor t = ten::empty(shape, {DType::float64});
  cudakit::random::uniform_(t, -2, 2, &g);
  return t.to(dtype).to(kCuda);
}

// The elements of `t` in row-major order (of its own, possibly strided, view) as doubles.
std::vector<double> host(const Tensor& t) { return t.contiguous().to_vector<double>(); }

// Element `i` (row-major in `shape`) of `t` broadcast to `shape`.
double at(const std::vector<double>& data, const Shape& own, const Shape& shape, std::int64_t i) {
  std::int64_t offset = 0, stride = 1;
  for (int d = static_cast<int>(shape.size()) - 1, od = static_cast<int>(own.size()) - 1; d >= 0; --d, --od) {
    const std::int64_t index = i % shape[d];
    i /= shape[d];
    if (od >= 0) {
      if (own[od] != 1) offset += index * stride;
      stride *= own[od];
    }
  }
  return data[offset];
}

// The spacing of `dtype`'s numbers just above 1 (0 for integers: their results are exact).
double epsilon(DType dtype) {
  switch (dtype) {
    case DType::float16: return 0x1p-10;
    case DType::bfloat16: return 0x1p-7;
    case DType::float32: return 0x1p-23;
    case DType::float64: return 0x1p-52;
    default: return 0;
  }
}

// How far a result may be from an exact reference: each rounding of the computation errs by at
// most half a unit of the computation type relative to what it rounds, so `terms` of them err by
// at most terms * epsilon / 2 of `magnitude` — the sum of the terms' absolute values, which with
// cancellation is much larger than the result — and the final rounding to the output's dtype by
// half a unit of the result. The bound is doubled (a few ulps). half types compute in float.
struct Accuracy {
  int terms = 1;
  // Per element, the sum of the absolute values of its terms; empty: the reference's |value|.
  std::vector<double> magnitudes;
};
double compute_epsilon(DType out) {
  return out == DType::float16 || out == DType::bfloat16 ? epsilon(DType::float32) : epsilon(out);
}
double allowed_error(double expected, double magnitude, DType out, int terms) {
  return 2 * (epsilon(out) / 2 * std::abs(expected) + terms * compute_epsilon(out) / 2 * magnitude);
}

void expect_near_all(const std::vector<double>& expected, const Tensor& got, DType dtype, const std::string& what,
                     const Accuracy& accuracy = {}) {
  const std::vector<double> g = host(got);
  ASSERT_EQ(g.size(), expected.size()) << what;
  ASSERT_TRUE(accuracy.magnitudes.empty() || accuracy.magnitudes.size() == expected.size()) << what;
  std::int64_t bad = 0;
  for (std::size_t i = 0; i < g.size(); ++i) {
    const double magnitude = accuracy.magnitudes.empty() ? std::abs(expected[i]) : accuracy.magnitudes[i];
    const double allowed = allowed_error(expected[i], magnitude, dtype, accuracy.terms);
    if (!(std::abs(g[i] - expected[i]) <= allowed)) {
      if (bad++ < 5) {
        ADD_FAILURE() << what << ": element " << i << " is " << g[i] << ", expected " << expected[i] << " (off by "
                      << std::abs(g[i] - expected[i]) << ", allowed " << allowed << ")";
      }
    }
  }
  EXPECT_EQ(bad, 0) << what;
}

const jit::JitFunction& axpy() {
  static const jit::JitFunction fn =
      jit::create_jit_fn("template <typename T> T axpy(T x, T y, T alpha) { return alpha * x + y; }", {{"alpha", 2.0}});
  return fn;
}

// alpha * x + y on the host, broadcast to `shape`, rounded to `out`'s dtype by the comparison's tolerance.
std::vector<double> axpy_reference(const Tensor& x, const Tensor& y, double alpha, const Shape& shape) {
  const auto hx = host(x), hy = host(y);
  std::vector<double> out(ten::shape_numel(shape));
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(out.size()); ++i) {
    out[i] = alpha * at(hx, x.sizes(), shape, i) + at(hy, y.sizes(), shape, i);
  }
  return out;
}

TEST(JitFunctionGpu, ContiguousInputsTakeTheVectorizedPathTailIncluded) {
  CUDAKIT_REQUIRE_GPU();
  for (std::int64_t n : {1, 3, 4, 1000, 1000003}) {
    const Tensor x = values({n}, DType::float32, 1), y = values({n}, DType::float32, 2);
    EXPECT_EQ(axpy().variant_for({x, y}).access, OperandAccess::vectorized);
    expect_near_all(axpy_reference(x, y, 2.0, {n}), axpy()(x, y), DType::float32, "n = " + std::to_string(n));
  }
}

TEST(JitFunctionGpu, MisalignedOffsetViewsTakeTheContiguousPath) {
  CUDAKIT_REQUIRE_GPU();
  const Tensor base = values({1025}, DType::float32, 3);
  const Tensor x = base.slice(0, 1, 1025);  // 4 bytes past a 16-byte boundary
  const Tensor y = values({1024}, DType::float32, 4);
  EXPECT_EQ(axpy().variant_for({x, y}).access, OperandAccess::contiguous);
  expect_near_all(axpy_reference(x, y, 2.0, {1024}), axpy()(x, y), DType::float32, "offset view");
}

TEST(JitFunctionGpu, MixedDtypesPromoteAsTorchDoes) {
  CUDAKIT_REQUIRE_GPU();
  struct Case { DType a, b, result; };
  for (const Case c : {Case{DType::float16, DType::float32, DType::float32}, Case{DType::bfloat16, DType::float16, DType::float32},
                       Case{DType::int32, DType::float16, DType::float16}, Case{DType::int64, DType::int32, DType::int64},
                       Case{DType::uint8, DType::float64, DType::float64}, Case{DType::bfloat16, DType::bfloat16, DType::bfloat16}}) {
    const Tensor x = values({257, 3}, c.a, 5), y = values({257, 3}, c.b, 6);
    const Tensor z = axpy()(x, y);
    EXPECT_EQ(z.dtype(), c.result);
    expect_near_all(axpy_reference(x, y, 2.0, {257, 3}), z, c.result,
                    std::string(ten::dtype_name(c.a)) + " with " + std::string(ten::dtype_name(c.b)));
  }
}

TEST(JitFunctionGpu, HostScalarsAndScalarParametersOverriddenByName) {
  CUDAKIT_REQUIRE_GPU();
  const Tensor x = values({1000}, DType::int32, 7);
  // An int32 tensor with a floating host number gives float32 (torch's default dtype).
  const Tensor z = axpy().call({x, 0.5}, {.scalars = {{"alpha", 3}}}).front();
  EXPECT_EQ(z.dtype(), DType::float32);
  const auto hx = host(x);
  std::vector<double> expected;
  for (double v : hx) expected.push_back(3 * v + 0.5);
  expect_near_all(expected, z, DType::float32, "host scalar input");
  // A half tensor with a double host number stays half.
  const Tensor h = values({64}, DType::float16, 8);
  EXPECT_EQ(axpy()(h, 1.0).dtype(), DType::float16);
}

TEST(JitFunctionGpu, BroadcastsAndReadsStridedViews) {
  CUDAKIT_REQUIRE_GPU();
  const Tensor x = values({4, 1, 5}, DType::float32, 9), y = values({3, 1}, DType::float16, 10);
  EXPECT_EQ(axpy().variant_for({x, y}).access, OperandAccess::strided);
  const Tensor z = axpy()(x, y);
  EXPECT_EQ(z.sizes(), (Shape{4, 3, 5}));
  expect_near_all(axpy_reference(x, y, 2.0, {4, 3, 5}), z, DType::float32, "broadcast");

  const Tensor t = values({300, 200}, DType::float32, 11).t();                        // transposed
  // Columns 5, 7, ..., 603 of 605: stepped and offset, 300 of them.
  const Tensor s = values({200, 605}, DType::bfloat16, 12).slice(1, 5, 605, 2);
  ASSERT_EQ(s.sizes(), (Shape{200, 300}));
  ASSERT_EQ(s.strides(), (Shape{605, 2}));
  const Tensor w = axpy()(t, s);
  expect_near_all(axpy_reference(t, s, 2.0, {200, 300}), w, DType::float32, "transposed with stepped slice");

  // Strided, offset views that broadcast: a column (every other row of a [400, 3], its third
  // column) against a row (every third element of row 1 of a [2, 900]), and the column against
  // the transposed matrix.
  const Tensor column = values({400, 3}, DType::float16, 26).slice(0, 1, 401, 2).slice(1, 2, 3);
  const Tensor row = values({2, 900}, DType::float32, 27).slice(0, 1, 2).slice(1, 0, 900, 3);
  ASSERT_EQ(column.sizes(), (Shape{200, 1}));
  ASSERT_EQ(row.sizes(), (Shape{1, 300}));
  EXPECT_EQ(axpy().variant_for({column, row}).access, OperandAccess::strided);
  const Tensor outer = axpy()(column, row);
  EXPECT_EQ(outer.sizes(), (Shape{200, 300}));
  expect_near_all(axpy_reference(column, row, 2.0, {200, 300}), outer, DType::float32, "column with row");
  const Tensor across = axpy()(t, column);
  expect_near_all(axpy_reference(t, column, 2.0, {200, 300}), across, DType::float32, "transposed with column");
}

TEST(JitFunctionGpu, OutMayBeAnInputButNotAShiftedView) {
  CUDAKIT_REQUIRE_GPU();
  Tensor x = values({4096}, DType::float32, 13);
  const Tensor y = values({4096}, DType::float32, 14);
  const auto expected = axpy_reference(x, y, 2.0, {4096});
  const auto result = axpy().call({x, y}, {.out = {x}});
  EXPECT_EQ(result.front().data_ptr(), x.data_ptr());
  expect_near_all(expected, x, DType::float32, "in place");
  // Another dtype for out: the result is converted.
  Tensor half_out = ten::empty({4096}, {.dtype = DType::float16, .device = kCuda});
  (void)axpy().call({x, y}, {.out = {half_out}});
  expect_near_all(axpy_reference(x, y, 2.0, {4096}), half_out, DType::float16, "float16 out");
  expect_refused([&] { (void)axpy().call({x.slice(0, 1, 4096), y.slice(0, 0, 4095)}, {.out = {x.slice(0, 0, 4095)}}); },
                 "overlaps a tensor input");
  expect_refused([&] { (void)axpy().call({x, y}, {.out = {ten::empty({4095}, {.device = kCuda})}}); },
                 "but the inputs broadcast to [4096]");
}

TEST(JitFunctionGpu, HalfTypesComputeInFloatOnEveryPath) {
  CUDAKIT_REQUIRE_GPU();
  // x * y - x * y' with values that lose everything when rounded to half between the steps.
  const jit::JitFunction fn = jit::create_jit_fn("template <typename T> T f(T x) { return (x + T(1000)) - T(1000); }");
  for (DType dtype : {DType::float16, DType::bfloat16}) {
    const Tensor x = values({1030}, dtype, 15);
    for (const Tensor& view : {x, x.slice(0, 1, 1030), x.slice(0, 0, 1030, 2)}) {
      const auto hx = host(view);
      // Two roundings in float of terms up to |x| + 1000 (in half the first would lose up to 0.25).
      Accuracy accuracy{.terms = 2};
      for (double v : hx) accuracy.magnitudes.push_back(std::abs(v) + 2000);
      expect_near_all(hx, fn(view), dtype, std::string(ten::dtype_name(dtype)) + " " + jit::to_string(fn.variant_for({view}).access),
                      accuracy);
    }
  }
}

TEST(JitFunctionGpu, MultipleOutputsAndSixteenInputs) {
  CUDAKIT_REQUIRE_GPU();
  const jit::JitFunction sincos = jit::create_multi_output_jit_fn(
      "template <typename T> void sincos(T x, T& s, T& c) { s = sin(x); c = cos(x); }", 2);
  const Tensor x = values({999}, DType::float64, 16);
  const auto out = sincos.call({x});
  ASSERT_EQ(out.size(), 2u);
  std::vector<double> s, c;
  for (double v : host(x)) {
    s.push_back(std::sin(v));
    c.push_back(std::cos(v));
  }
  // sin and cos of |x| < 2: an argument reduction and a polynomial, a few roundings of terms
  // below 2 (the device's are within 2 ulps, the host's within 1).
  const Accuracy trigonometric{.terms = 8, .magnitudes = std::vector<double>(s.size(), 2.0)};
  expect_near_all(s, out[0], DType::float64, "sin", trigonometric);
  expect_near_all(c, out[1], DType::float64, "cos", trigonometric);

  std::string params, body = "T(0)";
  for (int i = 0; i < 16; ++i) {
    params += (i ? ", T x" : "T x") + std::to_string(i);
    body += " + T(" + std::to_string(i + 1) + ") * x" + std::to_string(i);
  }
  const jit::JitFunction sum16 = jit::create_jit_fn("template <typename T> T s(" + params + ") { return " + body + "; }");
  std::vector<Tensor> inputs;
  for (int i = 0; i < 16; ++i) inputs.push_back(values({33, 7}, i % 2 ? DType::float32 : DType::float16, 100 + i));
  std::vector<jit::JitArgument> arguments(inputs.begin(), inputs.end());
  const Tensor r = sum16.call(arguments).front();
  std::vector<double> expected(33 * 7, 0);
  // Sixteen roundings (in an order and with contractions of the compiler's choosing) of terms
  // whose magnitudes add up to far more than their sum.
  Accuracy sixteen{.terms = 16, .magnitudes = std::vector<double>(expected.size(), 0)};
  for (int i = 0; i < 16; ++i) {
    const auto h = host(inputs[i]);
    for (std::size_t e = 0; e < expected.size(); ++e) {
      expected[e] += (i + 1) * h[e];
      sixteen.magnitudes[e] += std::abs((i + 1) * h[e]);
    }
  }
  expect_near_all(expected, r, DType::float32, "sixteen inputs", sixteen);
  // The bound still tells a wrong sum from a right one: for nearly every element the last term
  // alone is larger than the error allowed, so a sum that left it out would be refused.
  const auto last = host(inputs[15]);
  std::int64_t distinguishable = 0;
  for (std::size_t e = 0; e < expected.size(); ++e) {
    distinguishable += std::abs(16 * last[e]) > allowed_error(expected[e], sixteen.magnitudes[e], DType::float32, 16);
  }
  EXPECT_GT(distinguishable, static_cast<std::int64_t>(expected.size()) * 9 / 10);
}

// 2^31 + 8 elements: 64-bit index arithmetic on the vectorized and the strided paths (4 GiB).
TEST(JitFunctionGpu, MoreThanTwoToTheThirtyOneElements) {
  CUDAKIT_REQUIRE_GPU();
  const jit::JitFunction inc = jit::create_jit_fn("template <typename T> T inc(T x) { return x + T(1); }");
  const std::int64_t n = (std::int64_t{1} << 31) + 8;
  Tensor x = ten::empty({n}, {.dtype = DType::uint8, .device = kCuda});
  x.fill_(6);
  x.slice(0, n - 3, n).fill_(200);
  const auto v = inc.variant_for({x});
  EXPECT_TRUE(v.index64);
  EXPECT_EQ(v.access, OperandAccess::vectorized);
  Tensor y = inc.call({x}, {.out = {x}}).front();  // in place: no second 2 GiB
  EXPECT_EQ(host(y.slice(0, 0, 4)), (std::vector<double>{7, 7, 7, 7}));
  EXPECT_EQ(host(y.slice(0, n - 5, n)), (std::vector<double>{7, 7, 201, 201, 201}));
  // Strided: the transpose of [n / 2, 2].
  const Tensor t = x.view({n / 2, 2}).t();
  Tensor out = ten::empty({2, n / 2}, {.dtype = DType::uint8, .device = kCuda});
  const auto sv = inc.variant_for({t});
  EXPECT_EQ(sv.access, OperandAccess::strided);
  EXPECT_TRUE(sv.index64);
  (void)inc.call({t}, {.out = {out}});
  // Row 0 holds x's even elements, row 1 its odd ones: x[n-4] = 7, x[n-3..n-1] = 201.
  EXPECT_EQ(host(out.slice(1, n / 2 - 2, n / 2)), (std::vector<double>{8, 202, 202, 202}));
  EXPECT_EQ(host(out.slice(1, 0, 2)), (std::vector<double>{8, 8, 8, 8}));
}

TEST(JitReductionGpu, SumOfSquaresOverAllAndChosenDimensions) {
  CUDAKIT_REQUIRE_GPU();
  const jit::JitReduction sum_of_squares = jit::create_jit_reduction(
      "template <typename T> T square(T x) { return x * x; }", "template <typename T> T add(T a, T b) { return a + b; }", "0");
  for (std::int64_t n : {1, 7, 1000, 1 << 20, (1 << 22) + 3}) {
    const Tensor x = values({n}, DType::float32, 20);
    double expected = 0;
    for (double v : host(x)) expected += v * v;
    const Tensor total = sum_of_squares(x);
    EXPECT_EQ(total.dim(), 0);
    EXPECT_NEAR(total.item(), expected, 1e-5 * expected) << n;
  }
  const Tensor m = values({37, 1001}, DType::float64, 21);
  const auto hm = host(m);
  for (int dim : {0, 1, -1}) {
    const Tensor r = sum_of_squares.call({m}, {.dims = {dim}});
    const int d = dim < 0 ? 1 : dim;
    std::vector<double> expected(d == 0 ? 1001 : 37, 0);
    for (int i = 0; i < 37; ++i) {
      for (int j = 0; j < 1001; ++j) expected[d == 0 ? j : i] += hm[i * 1001 + j] * hm[i * 1001 + j];
    }
    // Positive terms: their magnitudes add up to the sum.
    expect_near_all(expected, r, DType::float64, "dim " + std::to_string(dim), {.terms = d == 0 ? 37 : 1001});
  }
  expect_refused([&] { (void)sum_of_squares.call({m}, {.dims = {2}}); },
                 "dimension 2 is out of range for the inputs' shape [37, 1001]");
  expect_refused([&] { (void)sum_of_squares.call({m}, {.dims = {1, -1}}); }, "dimension -1 is named twice in dims");
  const Tensor kept = sum_of_squares.call({m}, {.dims = {1}, .keepdim = true});
  EXPECT_EQ(kept.sizes(), (Shape{37, 1}));
  const Tensor strided = sum_of_squares.call({m.t()}, {.dims = {0}});  // rows of m, read down a transpose
  EXPECT_EQ(strided.sizes(), (Shape{37}));
  // Two results of 1001 roundings each, in different orders.
  expect_near_all(host(sum_of_squares.call({m}, {.dims = {1}})), strided, DType::float64, "strided rows", {.terms = 2 * 1001});
}

TEST(JitReductionGpu, HalfInputsAccumulateInFloat) {
  CUDAKIT_REQUIRE_GPU();
  const jit::JitReduction sum = jit::create_jit_reduction(
      "template <typename T> T id(T x) { return x; }", "template <typename T> T add(T a, T b) { return a + b; }", "0");
  // 3000 * 0.1 in float is ~299.93 (300 in half); a half accumulator stalls at 256.
  Tensor x = ten::full({3000}, 0.1, {.dtype = DType::float16, .device = kCuda});
  const Tensor r = sum(x);
  EXPECT_EQ(r.dtype(), DType::float16);
  EXPECT_EQ(r.item(), 300.0);
}

TEST(JitReductionGpu, MaximumWithIdentityAndEmptyReductions) {
  CUDAKIT_REQUIRE_GPU();
  const jit::JitReduction maximum = jit::create_jit_reduction(
      "template <typename T> T id(T x) { return x; }", "template <typename T> T larger(T a, T b) { return a > b ? a : b; }",
      "-1e30");
  const Tensor x = values({100, 50}, DType::bfloat16, 22);
  const auto hx = host(x);
  EXPECT_EQ(maximum(x).item(), *std::max_element(hx.begin(), hx.end()));
  const Tensor empty = ten::empty({4, 0}, {.device = kCuda});
  const Tensor r = maximum.call({empty}, {.dims = {1}});
  EXPECT_EQ(host(r), (std::vector<double>(4, static_cast<double>(-1e30f))));
}

// Note [Compiling during a capture]: the first call of a variant inside a global-mode capture
// compiles and loads without breaking the capture; the graph replays the kernel.
TEST(JitFunctionGpu, FirstCallInsideAGlobalCaptureKeepsTheCapture) {
  CUDAKIT_REQUIRE_GPU();
  // Unique code, so that this process compiles (or reads from disk) and loads it now.
  const jit::JitFunction fn = jit::create_jit_fn("template <typename T> T f(T x) { return x * T(3) + T(" +
                                                 std::to_string(::getpid() % 1000) + "); }");
  const Tensor x = values({4096}, DType::float32, 23);
  Tensor out = ten::empty({4096}, {.device = kCuda});
  cudakit::Stream stream(0);
  ASSERT_EQ(cudaStreamSynchronize(nullptr), cudaSuccess);
  ASSERT_EQ(cudaStreamBeginCapture(stream.handle(), cudaStreamCaptureModeGlobal), cudaSuccess);
  (void)fn.call({x}, {.out = {out}, .stream = stream.ref()});
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamEndCapture(stream.handle(), &graph), cudaSuccess);
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, stream.handle()), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream.handle()), cudaSuccess);
  std::vector<double> expected;
  Accuracy accuracy{.terms = 2};
  for (double v : host(x)) {
    expected.push_back(3 * v + ::getpid() % 1000);
    accuracy.magnitudes.push_back(std::abs(3 * v) + ::getpid() % 1000);
  }
  expect_near_all(expected, out, DType::float32, "replayed", accuracy);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
}

TEST(JitFunctionGpu, LaunchesReportToTheTraceHooks) {
  CUDAKIT_REQUIRE_GPU();
  const Tensor x = values({100}, DType::float32, 24), y = values({100}, DType::float32, 25);
  (void)axpy()(x, y);  // compiled before listening
  int launches = 0;
  std::size_t accesses = 0;
  const std::uint64_t id = cudakit::attach_trace_listener([&](const cudakit::TraceEvent& e) {
    if (e.kind == cudakit::TraceEventKind::kernel_launch && std::string(e.name) == "jiterator") {
      ++launches;
      accesses = e.accesses.size();
    }
  });
  (void)axpy()(x, y);
  cudakit::detach_trace_listener(id);
  EXPECT_EQ(launches, 1);
  EXPECT_EQ(accesses, 3u);
}

// Note [Launching through a one-node graph]: cached calls go through this thread's graph for the
// stream, updated only when something changed; each call still computes its own operands.
TEST(JitFunctionGpu, CachedCallsLaunchThroughAGraphPerStream) {
  CUDAKIT_REQUIRE_GPU();
  namespace cd = cudakit::detail;
  if (!cd::graph_launches_enabled()) GTEST_SKIP() << "CUDAKIT_LAUNCH_GRAPHS=0 in this environment";
  const Tensor x = values({1000}, DType::float32, 31), y = values({1000}, DType::float32, 32);
  const Tensor x2 = values({1000}, DType::float32, 33);
  Tensor out = ten::empty({1000}, {.device = kCuda}), out2 = ten::empty({1000}, {.device = kCuda});
  cudakit::Stream first(0), second(0);
  // Compiled (or found) and launched: plainly, the stream's first launch in this thread (unless an
  // earlier test's stream had the same handle), then through the graph the second makes.
  for (int i = 0; i < 2; ++i) (void)axpy().call({x, y}, {.out = {out}, .stream = first.ref()});
  cd::GraphLaunchCounters before = cd::graph_launch_counters();
  (void)axpy().call({x, y}, {.out = {out}, .stream = first.ref()});  // the same: no update
  cd::GraphLaunchCounters after = cd::graph_launch_counters();
  EXPECT_EQ(after.launches - before.launches, 1u);
  EXPECT_EQ(after.updates, before.updates);
  EXPECT_EQ(after.declined, before.declined);
  before = after;
  (void)axpy().call({x2, y}, {.out = {out2}, .stream = first.ref()});  // new operands: one update
  after = cd::graph_launch_counters();
  EXPECT_EQ(after.launches - before.launches, 1u);
  EXPECT_EQ(after.updates - before.updates, 1u);
  before = after;
  for (int i = 0; i < 2; ++i) (void)axpy().call({x2, y}, {.out = {out2}, .stream = second.ref()});
  after = cd::graph_launch_counters();
  EXPECT_EQ((after.launches - before.launches) + (after.declined - before.declined), 2u);
  EXPECT_GE(after.launches - before.launches, 1u) << "the second stream's second call goes through its graph";
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  expect_near_all(axpy_reference(x, y, 2.0, {1000}), out, DType::float32, "first operands", {.terms = 2});
  expect_near_all(axpy_reference(x2, y, 2.0, {1000}), out2, DType::float32, "second operands", {.terms = 2});
  // Many calls, operands alternating, the results of each kept apart: no update is lost.
  std::vector<Tensor> outs;
  for (int i = 0; i < 20; ++i) outs.push_back(axpy().call({i % 2 ? x2 : x, y}, {.stream = first.ref()})[0]);
  for (int i = 0; i < 20; ++i) {
    expect_near_all(axpy_reference(i % 2 ? x2 : x, y, 2.0, {1000}), outs[i], DType::float32,
                    "call " + std::to_string(i), {.terms = 2});
  }
  // Switched off, the same calls are plain launches, with the same results.
  cd::set_graph_launches(false);
  const cd::GraphLaunchCounters off_before = cd::graph_launch_counters();
  const Tensor plain = axpy().call({x, y}, {.stream = first.ref()})[0];
  EXPECT_EQ(cd::graph_launch_counters().launches, off_before.launches);
  cd::set_graph_launches(true);
  expect_near_all(axpy_reference(x, y, 2.0, {1000}), plain, DType::float32, "plain launch", {.terms = 2});
}

TEST(JitFunctionGpu, CallsInsideACaptureAreRecordedNotLaunched) {
  CUDAKIT_REQUIRE_GPU();
  namespace cd = cudakit::detail;
  const Tensor x = values({512}, DType::float32, 34), y = values({512}, DType::float32, 35);
  Tensor out = ten::empty({512}, {.device = kCuda});
  cudakit::Stream stream(0);
  (void)axpy().call({y, x}, {.out = {out}, .stream = stream.ref()});  // warm: the stream's graph exists
  ASSERT_EQ(cudaStreamSynchronize(stream.handle()), cudaSuccess);
  const cd::GraphLaunchCounters before = cd::graph_launch_counters();
  ASSERT_EQ(cudaStreamBeginCapture(stream.handle(), cudaStreamCaptureModeThreadLocal), cudaSuccess);
  (void)axpy().call({x, y}, {.out = {out}, .stream = stream.ref()});
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamEndCapture(stream.handle(), &graph), cudaSuccess);
  EXPECT_EQ(cd::graph_launch_counters().launches, before.launches);
  std::size_t nodes = 0;
  ASSERT_EQ(cudaGraphGetNodes(graph, nullptr, &nodes), cudaSuccess);
  EXPECT_EQ(nodes, 1u);  // the kernel itself, not a graph inside the graph
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, stream.handle()), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream.handle()), cudaSuccess);
  expect_near_all(axpy_reference(x, y, 2.0, {512}), out, DType::float32, "replayed", {.terms = 2});
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
}

}  // namespace
