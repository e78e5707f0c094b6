// The GPU tier of the random layer: bit identity with the CPU reference path (contiguous and
// strided outputs, sizes 1 .. 2^28), moments, randperm, default generators, and graph capture
// through the generator's device slot (See Note [Graph-safe Philox state]).

#include <gtest/gtest.h>

#include <vector>

#include "cudakit/core/error.hpp"
#include "cudakit/core/stream.hpp"
#include "cudakit/core/stream_guard.hpp"
#include "cudakit/random/default_generators.hpp"
#include "cudakit/random/distributions.hpp"
#include "cudakit/tensor/compare.hpp"
#include "cudakit/tensor/elementwise.hpp"
#include "cudakit/tensor/factories.hpp"
#include "cudakit/tensor/reduction.hpp"
#include "support/gpu_test.hpp"

namespace {

namespace rnd = cudakit::random;
namespace ten = cudakit::tensor;
using ten::Device;
using ten::DType;
using ten::Shape;
using ten::Tensor;

using Fill = void (*)(Tensor&, rnd::Generator&);
struct Dist {
  const char* name;
  Fill fill;
};
const Dist kUniform{"uniform", [](Tensor& t, rnd::Generator& g) { rnd::uniform_(t, 0, 1, &g); }};
const Dist kUniformRange{"uniform(-3,5)", [](Tensor& t, rnd::Generator& g) { rnd::uniform_(t, -3, 5, &g); }};
const Dist kNormal{"normal", [](Tensor& t, rnd::Generator& g) { rnd::normal_(t, 0, 1, &g); }};
const Dist kNormalShifted{"normal(2,3)", [](Tensor& t, rnd::Generator& g) { rnd::normal_(t, 2, 3, &g); }};
const Dist kExponential{"exponential", [](Tensor& t, rnd::Generator& g) { rnd::exponential_(t, 1.5, &g); }};
const Dist kBernoulli{"bernoulli", [](Tensor& t, rnd::Generator& g) { rnd::bernoulli_(t, 0.25, &g); }};
const Dist kRandint{"randint", [](Tensor& t, rnd::Generator& g) { rnd::random_(t, 3, 100, &g); }};
const Dist kRandintWide{"randint64", [](Tensor& t, rnd::Generator& g) {
  rnd::random_(t, 0, std::int64_t{1} << 50, &g);
}};

// The bits of `t` as an integer tensor (exact comparison, -0 != +0), where a dtype of that size
// exists; float16/bfloat16 compare by value.
Tensor bits(const Tensor& t) {
  if (ten::is_complex(t.dtype())) return bits(t.view_as_real());
  switch (ten::element_size(t.dtype())) {
    case 4: return t.view_as(DType::int32);
    case 8: return t.view_as(DType::int64);
    default: return t;
  }
}

// Draws the same (seed, offset) into `shape_view(empty)` on the GPU and on the CPU, then
// compares every element on the GPU. `make` builds the output (a view, possibly strided) from a
// fresh base tensor on the given device.
template <class Make>
void expect_bit_identical(const Dist& dist, DType dtype, Make make, std::uint64_t seed,
                          std::uint64_t offset, const std::string& what) {
  rnd::Generator gpu_gen(Device::cuda(0), seed), cpu_gen(Device::cpu(), seed);
  gpu_gen.set_offset(offset);
  cpu_gen.set_offset(offset);
  Tensor gpu = make(Device::cuda(0));
  Tensor cpu = make(Device::cpu());
  dist.fill(gpu, gpu_gen);
  dist.fill(cpu, cpu_gen);
  EXPECT_EQ(gpu_gen.offset(), cpu_gen.offset()) << what;
  const Tensor uploaded = cpu.contiguous().to(Device::cuda(0));
  const Tensor gpu_dense = gpu.contiguous();
  EXPECT_EQ(ten::count_mismatches(bits(gpu_dense), bits(uploaded)), 0)
      << dist.name << " " << ten::dtype_name(dtype) << " " << what;
}

TEST(RandomGpu, BitIdenticalToCpuFloat32AllSizes) {
  CUDAKIT_REQUIRE_GPU();
  const std::vector<std::int64_t> sizes = {1, 2, 3, 4, 5, 7, 257, 4099, 1000003, 1 << 24,
                                           (1 << 24) + 3, std::int64_t{1} << 28};
  for (const Dist& d : {kUniform, kNormal, kExponential, kUniformRange, kNormalShifted}) {
    for (const std::int64_t n : sizes) {
      const bool shifted = d.name == kUniformRange.name || d.name == kNormalShifted.name;
      if (n == (std::int64_t{1} << 28) && shifted) continue;
      expect_bit_identical(d, DType::float32,
                           [&](Device dev) { return ten::empty({n}, {DType::float32, dev}); },
                           0x5eed0000 + n, static_cast<std::uint64_t>(n) * 7, "n=" + std::to_string(n));
    }
  }
}

TEST(RandomGpu, BitIdenticalToCpuOtherDtypesAndDistributions) {
  CUDAKIT_REQUIRE_GPU();
  const std::vector<std::int64_t> sizes = {1, 3, 5, 1023, 1000003};
  for (const DType dtype : {DType::float64, DType::float16, DType::bfloat16}) {
    for (const Dist& d : {kUniform, kUniformRange, kNormal, kNormalShifted, kExponential, kBernoulli}) {
      for (const std::int64_t n : sizes) {
        expect_bit_identical(d, dtype, [&](Device dev) { return ten::empty({n}, {dtype, dev}); },
                             99, 12345, "n=" + std::to_string(n));
      }
    }
  }
  for (const DType dtype : {DType::int32, DType::int64, DType::uint8, DType::float32}) {
    for (const std::int64_t n : sizes) {
      expect_bit_identical(kRandint, dtype, [&](Device dev) { return ten::empty({n}, {dtype, dev}); },
                           5, 0, "n=" + std::to_string(n));
      expect_bit_identical(kBernoulli, dtype, [&](Device dev) { return ten::empty({n}, {dtype, dev}); },
                           5, 0, "n=" + std::to_string(n));
    }
  }
  // The narrow and unsigned integers; complex draws both parts (as torch).
  for (const DType dtype : {DType::int8, DType::int16, DType::uint16, DType::uint32, DType::uint64}) {
    for (const std::int64_t n : sizes) {
      expect_bit_identical(kRandint, dtype, [&](Device dev) { return ten::empty({n}, {dtype, dev}); },
                           6, 0, "n=" + std::to_string(n));
    }
  }
  for (const DType dtype : {DType::complex64, DType::complex128}) {
    for (const Dist& d : {kUniform, kUniformRange, kNormal, kNormalShifted}) {
      for (const std::int64_t n : sizes) {
        expect_bit_identical(d, dtype, [&](Device dev) { return ten::empty({n}, {dtype, dev}); },
                             7, 11, "n=" + std::to_string(n));
      }
    }
  }
  expect_bit_identical(kRandintWide, DType::int64,
                       [&](Device dev) { return ten::empty({100001}, {DType::int64, dev}); }, 5, 3,
                       "wide");
  expect_bit_identical(kBernoulli, DType::bool_,
                       [&](Device dev) { return ten::empty({100001}, {DType::bool_, dev}); }, 5, 3,
                       "bool");
}

TEST(RandomGpu, BitIdenticalToCpuAcrossAHighWordCarry) {
  // Draws whose counters cross a multiple of 2^32 take the kernel's 64-bit counter loop, the
  // others its 32-bit one (Note [Warp tiles]); both must give the CPU's values.
  CUDAKIT_REQUIRE_GPU();
  for (const Dist& d : {kUniform, kNormal, kNormalShifted, kExponential}) {
    for (const std::uint64_t offset : {(std::uint64_t{1} << 32) - 1000, (std::uint64_t{7} << 32) - 1,
                                       (std::uint64_t{3} << 32)}) {
      expect_bit_identical(d, DType::float32,
                           [&](Device dev) { return ten::empty({1000003}, {DType::float32, dev}); },
                           17, offset, "offset=" + std::to_string(offset));
    }
  }
}

TEST(RandomGpu, BitIdenticalToCpuForStridedOutputs) {
  CUDAKIT_REQUIRE_GPU();
  for (const DType dtype : {DType::float32, DType::float64, DType::float16, DType::bfloat16}) {
    for (const Dist& d : {kUniform, kNormal, kExponential}) {
      // Transposed.
      expect_bit_identical(d, dtype,
                           [&](Device dev) { return ten::empty({333, 517}, {dtype, dev}).t(); },
                           1, 2, "transposed");
      // Stepped slice of a 3-D tensor, then a transpose: offset and gaps.
      expect_bit_identical(
          d, dtype,
          [&](Device dev) {
            return ten::zeros({7, 64, 33}, {dtype, dev}).slice(1, 3, 61, 3).transpose(0, 2);
          },
          3, 4, "sliced");
      // Contiguous but misaligned for vector stores (starts at element 1).
      expect_bit_identical(
          d, dtype,
          [&](Device dev) { return ten::empty({100001}, {dtype, dev}).slice(0, 1, 100001); }, 5,
          6, "misaligned");
    }
  }
}

TEST(RandomGpu, MomentsOnTheGpu) {
  CUDAKIT_REQUIRE_GPU();
  const std::int64_t n = 1 << 24;
  rnd::Generator gen(Device::cuda(0), 2024);
  const auto moments = [&](const Tensor& x) {
    const double m = ten::mean(x.to(DType::float64)).item();
    const double m2 = ten::mean(ten::mul(x.to(DType::float64), x.to(DType::float64))).item();
    return std::pair{m, m2 - m * m};
  };
  for (const DType dtype : {DType::float32, DType::float64, DType::float16, DType::bfloat16}) {
    Tensor t = ten::empty({n}, {dtype, Device::cuda(0)});
    rnd::normal_(t, 0, 1, &gen);
    auto [m, v] = moments(t);
    EXPECT_NEAR(m, 0.0, 1e-3) << ten::dtype_name(dtype);
    EXPECT_NEAR(v, 1.0, 2e-3) << ten::dtype_name(dtype);
    rnd::uniform_(t, 0, 1, &gen);
    std::tie(m, v) = moments(t);
    // Uniforms sit on T's mantissa grid k * 2^-bits (8 bits for bfloat16): mean 1/2 - 2^-(bits+1).
    const double grid = dtype == DType::bfloat16 ? 0x1p-8 : dtype == DType::float16 ? 0x1p-11 : 0;
    EXPECT_NEAR(m, 0.5 - grid / 2, 1e-3) << ten::dtype_name(dtype);
    EXPECT_NEAR(v, 1.0 / 12, 1e-3) << ten::dtype_name(dtype);
    rnd::exponential_(t, 2.0, &gen);
    std::tie(m, v) = moments(t);
    EXPECT_NEAR(m, 0.5, 1e-3) << ten::dtype_name(dtype);
    EXPECT_NEAR(v, 0.25, 2e-3) << ten::dtype_name(dtype);
  }
}

TEST(RandomGpu, RandpermMatchesCpuAndIsAPermutation) {
  CUDAKIT_REQUIRE_GPU();
  for (const std::int64_t n : {1, 2, 17, 100000, 3000017}) {
    for (const DType dtype : {DType::int32, DType::int64}) {
      rnd::Generator g(Device::cuda(0), 8), c(Device::cpu(), 8);
      const Tensor gpu = rnd::randperm(n, {dtype, Device::cuda(0)}, &g);
      const Tensor cpu = rnd::randperm(n, {dtype, Device::cpu()}, &c);
      EXPECT_EQ(ten::count_mismatches(gpu, cpu.to(Device::cuda(0))), 0) << n;
      EXPECT_EQ(ten::sum(gpu).item(), static_cast<double>(n) * (n - 1) / 2) << n;
      EXPECT_EQ(g.offset(), c.offset());
    }
  }
}

TEST(RandomGpu, DefaultGeneratorsSeedAndState) {
  CUDAKIT_REQUIRE_GPU();
  rnd::manual_seed_all(123);
  EXPECT_EQ(rnd::initial_seed(), 123u);
  const auto states = rnd::get_rng_state_all();
  ASSERT_EQ(static_cast<int>(states.size()), cudakit::device_count());
  const Tensor a = rnd::randn({1000}, {DType::float32, Device::cuda(0)});
  rnd::set_rng_state_all(states);
  const Tensor b = rnd::randn({1000}, {DType::float32, Device::cuda(0)});
  EXPECT_TRUE(ten::equal(bits(a), bits(b)));
  rnd::manual_seed(123);
  const Tensor c = rnd::randn({1000}, {DType::float32, Device::cuda(0)});
  EXPECT_TRUE(ten::equal(bits(a), bits(c)));
  const Tensor d = rnd::randn({1000}, {DType::float32, Device::cuda(0)});
  EXPECT_FALSE(ten::equal(a, d));
  const std::uint64_t s = rnd::seed();
  EXPECT_EQ(rnd::initial_seed(), s);
  rnd::seed_all();
  EXPECT_THROW(rnd::set_rng_state_all({}), cudakit::InvalidArgumentError);
  rnd::Generator host(Device::cpu());
  Tensor t = ten::empty({4}, {DType::float32, Device::cuda(0)});
  try {
    rnd::uniform_(t, 0, 1, &host);
    FAIL();
  } catch (const cudakit::InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("generator of cpu cannot fill a tensor on cuda:0"),
              std::string::npos) << e.what();
  }
}

TEST(RandomGpu, GraphReplaysDrawFreshNumbersMatchingEagerDraws) {
  CUDAKIT_REQUIRE_GPU();
  cudakit::Stream stream;
  cudakit::StreamGuard guard(stream);
  rnd::Generator gen(Device::cuda(0), 77);
  Tensor a = ten::empty({1000}, {DType::float32, Device::cuda(0)}, stream);
  Tensor b = ten::empty({33, 31}, {DType::float32, Device::cuda(0)}, stream);
  Tensor bt = b.t();
  rnd::normal_(a, 0, 1, &gen, stream);  // eager first: kernels loaded, caches warm
  stream.synchronize();

  gen.capture_prologue();
  stream.synchronize();
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamBeginCapture(stream.handle(), cudaStreamCaptureModeThreadLocal), cudaSuccess);
  rnd::normal_(a, 0, 1, &gen, stream);
  rnd::uniform_(bt, -1, 1, &gen, stream);
  const std::uint64_t increment = gen.capture_epilogue(stream);
  ASSERT_EQ(cudaStreamEndCapture(stream.handle(), &graph), cudaSuccess);
  EXPECT_EQ(increment, 250u + 256u);  // ceil(1000 / 4) + ceil(1023 / 4)
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);

  std::vector<float> previous;
  for (int replay = 0; replay < 4; ++replay) {
    const std::vector<std::uint8_t> before = gen.get_state();
    gen.replay_prologue(increment, stream);
    ASSERT_EQ(cudaGraphLaunch(exec, stream.handle()), cudaSuccess);
    stream.synchronize();
    rnd::Generator decoded(Device::cpu());
    decoded.set_state(before);
    EXPECT_EQ(gen.offset(), decoded.offset() + increment);
    // The same calls, eagerly, from the same state (on the CPU path, which is bit-identical).
    rnd::Generator eager(Device::cpu());
    eager.set_state(before);
    Tensor ea = ten::empty({1000}, {DType::float32});
    Tensor eb = ten::empty({33, 31}, {DType::float32});
    Tensor ebt = eb.t();
    rnd::normal_(ea, 0, 1, &eager);
    rnd::uniform_(ebt, -1, 1, &eager);
    EXPECT_EQ(ten::count_mismatches(bits(a), bits(ea.to(Device::cuda(0), stream)), stream), 0) << replay;
    EXPECT_EQ(ten::count_mismatches(bits(b), bits(eb.to(Device::cuda(0), stream)), stream), 0) << replay;
    std::vector<float> now = a.to_vector<float>(stream);
    EXPECT_NE(now, previous) << "replay " << replay << " repeated the previous numbers";
    previous = std::move(now);
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
}

TEST(RandomGpu, CaptureWithoutPrologueIsRefused) {
  CUDAKIT_REQUIRE_GPU();
  cudakit::Stream stream;
  rnd::Generator gen(Device::cuda(0), 1);
  Tensor a = ten::empty({16}, {DType::float32, Device::cuda(0)}, stream);
  stream.synchronize();
  ASSERT_EQ(cudaStreamBeginCapture(stream.handle(), cudaStreamCaptureModeThreadLocal), cudaSuccess);
  EXPECT_THROW(rnd::uniform_(a, 0, 1, &gen, stream), cudakit::StateError);
  cudaGraph_t graph = nullptr;
  cudaStreamEndCapture(stream.handle(), &graph);
  if (graph) cudaGraphDestroy(graph);
}

}  // namespace
