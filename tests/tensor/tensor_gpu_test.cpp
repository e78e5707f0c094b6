// The GPU tier of the tensor layer: every operation on CUDA tensors against the host back end
// (contiguous, strided, broadcast, every dtype), copies between host and device, streams.

#include <gtest/gtest.h>

#include <vector>

#include "cudakit/core/error.hpp"
#include "cudakit/core/stream.hpp"
#include "cudakit/random/distributions.hpp"
#include "cudakit/tensor/compare.hpp"
#include "cudakit/tensor/elementwise.hpp"
#include "cudakit/tensor/factories.hpp"
#include "cudakit/tensor/matmul.hpp"
#include "cudakit/tensor/reduction.hpp"
#include "support/gpu_test.hpp"

namespace {

namespace rnd = cudakit::random;
namespace ten = cudakit::tensor;
using ten::Device;
using ten::DType;
using ten::Shape;
using ten::Tensor;

const Device kCuda{Device::Type::cuda, 0};

// A host tensor of uniform values in [-2, 2), converted to `dtype`.
Tensor host_values(const Shape& shape, DType dtype, std::uint64_t seed) {
  rnd::Generator g(Device::cpu(), seed);
  Tensor t = ten::empty(shape, {DType::float64});
  rnd::uniform_(t, -2, 2, &g);
  return t.to(dtype);
}

// Host result vs device result, compared on the host.
void expect_same(const Tensor& cpu, const Tensor& gpu, double rtol, const std::string& what) {
  ASSERT_TRUE(gpu.device().is_cuda()) << what;
  ASSERT_EQ(cpu.sizes(), gpu.sizes()) << what;
  const Tensor back = gpu.to_host();
  if (rtol == 0) {
    EXPECT_TRUE(ten::equal(cpu, back)) << what;
  } else {
    EXPECT_TRUE(ten::allclose(cpu.to(DType::float64), back.to(DType::float64), rtol, rtol)) << what;
  }
}

TEST(TensorGpu, ElementwiseMatchesHostForEveryDtypeAndLayout) {
  CUDAKIT_REQUIRE_GPU();
  for (const DType dtype : {DType::float32, DType::float64, DType::float16, DType::bfloat16,
                            DType::int32, DType::int64}) {
    const bool floating = ten::is_floating(dtype);
    const Tensor a = host_values({37, 129}, dtype, 1);
    const Tensor row = host_values({129}, dtype, 2);
    const Tensor col = host_values({37, 1}, dtype, 3);
    const Tensor at = host_values({129, 37}, dtype, 4).t();  // strided operand
    const Tensor da = a.to(kCuda), drow = row.to(kCuda), dcol = col.to(kCuda), dat = at.to(kCuda);
    const std::string name(ten::dtype_name(dtype));
    expect_same(ten::add(a, row), ten::add(da, drow), 0, "add " + name);
    expect_same(ten::sub(col, a), ten::sub(dcol, da), 0, "sub " + name);
    expect_same(ten::mul(at, col), ten::mul(dat, dcol), 0, "mul " + name);
    expect_same(ten::add(a, 3.0), ten::add(da, 3.0), 0, "add scalar " + name);
    expect_same(ten::mul(at, -2.0), ten::mul(dat, -2.0), 0, "mul scalar " + name);
    expect_same(ten::relu(at), ten::relu(dat), 0, "relu " + name);
    expect_same(ten::neg(a), ten::neg(da), 0, "neg " + name);
    if (floating) {
      expect_same(ten::div(a, row), ten::div(da, drow), 0, "div " + name);
      expect_same(ten::div(at, 3.0), ten::div(dat, 3.0), 0, "div scalar " + name);
      expect_same(ten::exp(at), ten::exp(dat), dtype == DType::float64 ? 1e-14 : 1e-6,
                  "exp " + name);
    }
    // A large contiguous input takes the vectorized path, its tail the scalar one.
    const Tensor big = host_values({(1 << 20) + 3}, dtype, 5);
    expect_same(ten::add(big, big), ten::add(big.to(kCuda), big.to(kCuda)), 0, "big " + name);
  }
}

TEST(TensorGpu, FactoriesCopiesAndConversions) {
  CUDAKIT_REQUIRE_GPU();
  expect_same(ten::arange(0, 1000, 0.5, {DType::float32}),
              ten::arange(0, 1000, 0.5, {DType::float32, kCuda}), 0, "arange");
  expect_same(ten::full({3, 5}, 7.25, {DType::bfloat16}), ten::full({3, 5}, 7.25, {DType::bfloat16, kCuda}),
              0, "full");
  const Tensor x = host_values({64, 48}, DType::float32, 6);
  // Device-side strided copy with dtype conversion, both ways.
  for (const DType to : {DType::float16, DType::float64, DType::int32, DType::bool_}) {
    Tensor dst = ten::zeros({48, 64}, {to, kCuda});
    dst.copy_(x.to(kCuda).t());
    expect_same(x.t().to(to), dst, 0, std::string("copy to ") + std::string(ten::dtype_name(to)));
  }
  // Host -> device into a strided view, device -> strided host view.
  Tensor d = ten::zeros({64, 96}, {DType::float32, kCuda});
  d.slice(1, 0, 96, 2).copy_(x);
  EXPECT_TRUE(ten::equal(d.to_host().slice(1, 0, 96, 2), x));
  Tensor h = ten::zeros({96, 64}, {DType::float32});
  h.slice(0, 1, 96, 2).copy_(d.slice(1, 0, 96, 2).t());  // [48, 64] from a strided device view
  EXPECT_TRUE(ten::equal(h.slice(0, 1, 96, 2), x.t().contiguous()));
  // Pinned host memory: asynchronous both ways, complete after a synchronize.
  cudakit::Stream s;
  Tensor pinned = ten::empty({1 << 20}, {DType::float32, Device::cpu(), true});
  ASSERT_TRUE(pinned.storage()->is_pinned());
  pinned.fill_(3.0);
  Tensor dev = ten::empty({1 << 20}, {DType::float32, kCuda}, s);
  dev.copy_(pinned, s);
  Tensor back = ten::empty({1 << 20}, {DType::float32, Device::cpu(), true});
  back.copy_(dev, s, /*non_blocking=*/true);
  s.synchronize();
  EXPECT_EQ(back.data<float>()[(1 << 20) - 1], 3.0f);
  dev.record_stream(s);
  EXPECT_EQ(ten::sum(dev, s).item(s), 3.0 * (1 << 20));
}

TEST(TensorGpu, ReductionsMatchHost) {
  CUDAKIT_REQUIRE_GPU();
  for (const DType dtype : {DType::float32, DType::float64, DType::float16, DType::int32}) {
    const Tensor a = host_values({33, 65, 17}, dtype, 7);
    const Tensor da = a.to(kCuda);
    const double rtol = dtype == DType::float16 ? 1e-2 : 1e-5;
    const std::string name(ten::dtype_name(dtype));
    expect_same(ten::sum(a), ten::sum(da), rtol, "sum " + name);
    for (int dim = 0; dim < 3; ++dim) {
      expect_same(ten::sum(a, dim), ten::sum(da, dim), rtol, "sum dim " + name);
      expect_same(ten::sum(a.transpose(0, 2), dim, true), ten::sum(da.transpose(0, 2), dim, true),
                  rtol, "sum transposed " + name);
      if (ten::is_floating(dtype)) {
        expect_same(ten::mean(a, dim), ten::mean(da, dim), rtol, "mean dim " + name);
      }
    }
  }
  // Long single segments are split across blocks.
  const Tensor big = ten::ones({(1 << 24) - 5}, {DType::float32, kCuda});  // exact in float
  EXPECT_EQ(ten::sum(big).item(), static_cast<double>((1 << 24) - 5));
  EXPECT_NEAR(ten::mean(big).item(), 1.0, 1e-6);
  EXPECT_EQ(ten::sum(ten::ones({3, 1 << 20}, {DType::int64, kCuda}), 1).to_vector<std::int64_t>(),
            std::vector<std::int64_t>(3, 1 << 20));
}

TEST(TensorGpu, MatmulMatchesHost) {
  CUDAKIT_REQUIRE_GPU();
  for (const DType dtype : {DType::float32, DType::float16, DType::bfloat16, DType::float64}) {
    const double rtol = dtype == DType::float32 ? 1e-4 : dtype == DType::float64 ? 1e-12 : 3e-2;
    const std::string name(ten::dtype_name(dtype));
    const Tensor a = host_values({67, 45}, dtype, 8), b = host_values({45, 31}, dtype, 9);
    expect_same(ten::matmul(a, b), ten::matmul(a.to(kCuda), b.to(kCuda)), rtol, "2-D " + name);
    const Tensor at = host_values({45, 67}, dtype, 10).t(), bt = host_values({31, 45}, dtype, 11).t();
    expect_same(ten::matmul(at, bt), ten::matmul(at.to(kCuda), bt.to(kCuda)), rtol, "transposed " + name);
    const Tensor sliced = host_values({67, 90}, dtype, 12).slice(1, 0, 90, 2);  // copied first
    expect_same(ten::matmul(sliced, b), ten::matmul(sliced.to(kCuda), b.to(kCuda)), rtol, "sliced " + name);
    const Tensor ba = host_values({5, 20, 45}, dtype, 13), bb = host_values({5, 45, 9}, dtype, 14);
    expect_same(ten::matmul(ba, bb), ten::matmul(ba.to(kCuda), bb.to(kCuda)), rtol, "batched " + name);
    expect_same(ten::matmul(ba, b), ten::matmul(ba.to(kCuda), b.to(kCuda)), rtol, "broadcast " + name);
  }
}

TEST(TensorGpu, ErrorsNameDevices) {
  CUDAKIT_REQUIRE_GPU();
  const Tensor h = ten::zeros({2});
  const Tensor d = ten::zeros({2}, {DType::float32, kCuda});
  try {
    (void)ten::add(h, d);
    FAIL();
  } catch (const cudakit::InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("float32[2] on cpu and float32[2] on cuda:0"),
              std::string::npos) << e.what();
  }
  EXPECT_THROW((void)ten::matmul(ten::zeros({2, 2}), ten::zeros({2, 2}, {DType::float32, kCuda})),
               cudakit::InvalidArgumentError);
  EXPECT_TRUE(ten::allclose(ten::exp(d), ten::ones({2}, {DType::float32, kCuda})));
}

}  // namespace
