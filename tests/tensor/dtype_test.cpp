// The dtypes of today's checkpoints on host tensors: names, sizes, promotion by torch's table,
// factories, fill, casts (FP8 by torch's rules, complex, the narrow and unsigned integers),
// packed FP4 as storage only, and the errors for operations a dtype does not have.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "cudakit/core/error.hpp"
#include "cudakit/tensor/compare.hpp"
#include "cudakit/tensor/detail/float8.hpp"
#include "cudakit/tensor/elementwise.hpp"
#include "cudakit/tensor/factories.hpp"
#include "cudakit/tensor/matmul.hpp"
#include "cudakit/random/distributions.hpp"
#include "cudakit/tensor/reduction.hpp"
#include "support/expect_refused.hpp"

namespace {

namespace ten = cudakit::tensor;
using ten::DType;
using ten::Tensor;
using cudakit::testing::expect_refused;

std::vector<std::uint8_t> bytes_of(const Tensor& t) {
  const Tensor host = t.to_host();
  std::vector<std::uint8_t> out(host.nbytes());
  std::memcpy(out.data(), host.data_ptr(), out.size());
  return out;
}

const std::vector<DType> kAll = {
    DType::float32, DType::float16, DType::bfloat16, DType::float64, DType::int32,
    DType::int64, DType::uint8, DType::bool_, DType::int8, DType::int16, DType::uint16,
    DType::uint32, DType::uint64, DType::float8_e4m3fn, DType::float8_e5m2,
    DType::float8_e8m0fnu, DType::complex64, DType::complex128, DType::float4_e2m1fn_x2};

TEST(DTypes, NamesSizesAndParsingAgree) {
  ASSERT_EQ(static_cast<int>(kAll.size()), ten::kDTypeCount);
  const std::vector<std::size_t> sizes = {4, 2, 2, 8, 4, 8, 1, 1, 1, 2, 2, 4, 8, 1, 1, 1, 8, 16, 1};
  for (std::size_t i = 0; i < kAll.size(); ++i) {
    EXPECT_EQ(ten::element_size(kAll[i]), sizes[i]) << ten::dtype_name(kAll[i]);
    EXPECT_EQ(ten::parse_dtype(ten::dtype_name(kAll[i])), kAll[i]);
  }
  EXPECT_EQ(ten::dtype_name(DType::float8_e8m0fnu), "float8_e8m0fnu");
  expect_refused([] { (void)ten::parse_dtype("float8_e4m3"); }, "float8_e4m3fn");  // lists the names
}

TEST(DTypes, PromotionFollowsTorch) {
  EXPECT_EQ(ten::promote_types(DType::uint8, DType::int8), DType::int16);
  EXPECT_EQ(ten::promote_types(DType::int8, DType::int32), DType::int32);
  EXPECT_EQ(ten::promote_types(DType::int16, DType::float16), DType::float16);
  EXPECT_EQ(ten::promote_types(DType::complex64, DType::float64), DType::complex128);
  EXPECT_EQ(ten::promote_types(DType::float16, DType::complex64), DType::complex64);
  EXPECT_EQ(ten::promote_types(DType::uint32, DType::float32), DType::float32);
  EXPECT_EQ(ten::promote_types(DType::uint64, DType::uint64), DType::uint64);
  EXPECT_EQ(ten::promote_types(DType::float8_e4m3fn, DType::float8_e4m3fn), DType::float8_e4m3fn);
  expect_refused([] { (void)ten::promote_types(DType::float8_e4m3fn, DType::float32); }, "float8_e4m3fn and float32");
  expect_refused([] { (void)ten::promote_types(DType::uint32, DType::int64); }, "uint32 and int64");
}

TEST(DTypes, EveryDTypeHasFactoriesFillAndCopies) {
  for (const DType dtype : kAll) {
    SCOPED_TRACE(std::string(ten::dtype_name(dtype)));
    Tensor z = ten::zeros({3, 4}, {.dtype = dtype});
    EXPECT_EQ(z.nbytes(), 12 * ten::element_size(dtype));
    for (const std::uint8_t b : bytes_of(z)) ASSERT_EQ(b, 0);
    // A strided copy of the same dtype keeps the bytes.
    Tensor t = ten::empty({4, 3}, {.dtype = dtype});
    auto* p = static_cast<std::uint8_t*>(t.data_ptr());
    for (std::size_t i = 0; i < t.nbytes(); ++i) p[i] = static_cast<std::uint8_t>(i * 7 + 1);
    if (dtype == DType::bool_) for (std::size_t i = 0; i < t.nbytes(); ++i) p[i] &= 1;
    Tensor copy = ten::empty({3, 4}, {.dtype = dtype});
    copy.copy_(t.t());
    EXPECT_EQ(bytes_of(copy.t().contiguous()), bytes_of(t));
  }
}

TEST(DTypes, FillAndCastToFp8UseTorchsRules) {
  const std::vector<double> values = {0.0, -0.0, 1.0, 0.3, -2.75, 448.0, 464.0, 470.0, 1e6,
                                      61440.0, std::numeric_limits<double>::infinity(),
                                      std::numeric_limits<double>::quiet_NaN(), 1e-300, 3.0};
  const Tensor source = ten::from_host(values);
  const Tensor e4m3 = source.to(DType::float8_e4m3fn);
  const Tensor e5m2 = source.to(DType::float8_e5m2);
  const Tensor e8m0 = source.to(DType::float8_e8m0fnu);
  for (std::size_t i = 0; i < values.size(); ++i) {
    const float f = static_cast<float>(values[i]);  // through float, as torch
    EXPECT_EQ(e4m3.data<ten::float8_e4m3fn>()[i].bits, ten::detail::float_to_e4m3fn(f)) << values[i];
    EXPECT_EQ(e5m2.data<ten::float8_e5m2>()[i].bits, ten::detail::float_to_e5m2(f)) << values[i];
    EXPECT_EQ(e8m0.data<ten::float8_e8m0fnu>()[i].bits, ten::detail::float_to_e8m0fnu(f)) << values[i];
  }
  // Back to float32 exactly; fill agrees with the cast.
  const std::vector<float> back = e4m3.to_vector<float>();
  EXPECT_EQ(back[2], 1.0f);
  EXPECT_EQ(back[4], -2.75f);
  EXPECT_TRUE(std::isnan(back[7]));  // 470 has no e4m3fn value: NaN, no saturation
  Tensor filled = ten::full({5}, 0.3, {.dtype = DType::float8_e4m3fn});
  for (int i = 0; i < 5; ++i) EXPECT_EQ(filled.data<ten::float8_e4m3fn>()[i].bits, e4m3.data<ten::float8_e4m3fn>()[3].bits);
  // Integers go through float too: 1.5 * 2^25 - 1 becomes 1.5 * 2^25 first, which E8M0 rounds
  // up to 2^26 (straight from the integer it would be 2^25).
  const Tensor big = ten::from_host(std::vector<std::int64_t>{50331647}).to(DType::float8_e8m0fnu);
  EXPECT_EQ(big.to_vector<double>()[0], 67108864.0);
}

TEST(DTypes, ComplexConvertsAsTorch) {
  const Tensor real = ten::from_host(std::vector<double>{1.5, -2.0, 0.0});
  const Tensor c = real.to(DType::complex64);
  EXPECT_EQ(c.data<ten::complex64>()[0].re, 1.5f);
  EXPECT_EQ(c.data<ten::complex64>()[1].im, 0.0f);
  Tensor z = ten::from_host(std::vector<ten::complex128>{{1.25, 2.0}, {0.0, -1.0}, {0.0, 0.0}});
  EXPECT_EQ(z.to_vector<double>(), (std::vector<double>{1.25, 0.0, 0.0}));  // the real part
  EXPECT_EQ(z.to(DType::bool_).to_vector<std::uint8_t>(), (std::vector<std::uint8_t>{1, 1, 0}));
  const Tensor narrowed = z.to(DType::complex64);
  EXPECT_EQ(narrowed.data<ten::complex64>()[1].im, -1.0f);
  Tensor full = ten::full({2}, 3.0, {.dtype = DType::complex128});
  EXPECT_EQ(full.data<ten::complex128>()[1].re, 3.0);
  EXPECT_EQ(full.data<ten::complex128>()[1].im, 0.0);
}

TEST(DTypes, NarrowAndUnsignedIntegersComputeAndConvert) {
  const Tensor a = ten::from_host(std::vector<std::int8_t>{-128, -1, 0, 127});
  EXPECT_EQ(ten::add(a, 1.0).to_vector<std::int64_t>(), (std::vector<std::int64_t>{-127, 0, 1, -128}));  // wraps
  const Tensor u = ten::from_host(std::vector<std::uint64_t>{0, 1, std::numeric_limits<std::uint64_t>::max()});
  EXPECT_EQ(ten::sum(u.to(DType::uint32)).item(), static_cast<double>(std::numeric_limits<std::uint32_t>::max()) + 1);
  EXPECT_EQ(u.to(DType::uint16).to_vector<std::uint16_t>()[2], 0xffff);
  EXPECT_EQ(ten::from_host(std::vector<std::int16_t>{-300, 300}).to(DType::int32).to_vector<std::int32_t>(),
            (std::vector<std::int32_t>{-300, 300}));
  EXPECT_TRUE(ten::equal(ten::arange(4.0, {.dtype = DType::uint16}),
                         ten::from_host(std::vector<std::uint16_t>{0, 1, 2, 3})));
}

TEST(DTypes, OperationsWithoutTheDTypeNameTheOpAndTheDType) {
  const Tensor f8 = ten::zeros({2, 2}, {.dtype = DType::float8_e4m3fn});
  expect_refused([&] { (void)ten::add(f8, f8); }, "add is not defined for float8_e4m3fn");
  expect_refused([&] { (void)ten::sum(ten::zeros({2}, {.dtype = DType::complex64})); }, "sum is not defined for complex64");
  expect_refused([&] { (void)ten::matmul(f8, f8); }, "float8_e4m3fn");
  expect_refused([&] { (void)ten::arange(3.0, {.dtype = DType::float8_e5m2}); }, "arange is not defined for float8_e5m2");
  expect_refused([&] { (void)ten::equal(f8, f8); }, "equal is not defined for float8_e4m3fn");
}

TEST(DTypes, ComplexRandomDrawsBothPartsAsTorch) {
  namespace rnd = cudakit::random;
  rnd::Generator g(ten::Device::cpu(), 37);
  Tensor z = ten::empty({4000}, {.dtype = DType::complex64});
  rnd::normal_(z, 0.0, 1.0, &g);
  // The same draw as the parts' own: normal(0, 1/sqrt(2)) into the float32 view.
  rnd::Generator again(ten::Device::cpu(), 37);
  Tensor parts = ten::empty({4000, 2});
  rnd::normal_(parts, 0.0, 1.0 / std::sqrt(2.0), &again);
  EXPECT_TRUE(ten::equal(z.view_as_real(), parts));
  const double power = ten::mean(ten::mul(parts, parts)).item() * 2;  // E|z|^2
  EXPECT_NEAR(power, 1.0, 0.1);
  Tensor u = ten::empty({1000}, {.dtype = DType::complex128});
  rnd::uniform_(u, 2.0, 3.0, &g);
  for (const double v : u.view_as_real().to_vector<double>()) ASSERT_TRUE(v >= 2.0 && v < 3.0) << v;
  expect_refused([] { (void)ten::zeros({2}).view_as_real(); }, "expects a complex tensor");
  expect_refused([&] { (void)rnd::rand({2}, {.dtype = DType::float8_e4m3fn}); }, "float8_e4m3fn");
}

TEST(DTypes, PackedFp4IsStorageOnly) {
  Tensor packed = ten::zeros({2, 8}, {.dtype = DType::float4_e2m1fn_x2});
  expect_refused([&] { (void)packed.to(DType::float32); }, "float4_e2m1fn_x2");
  expect_refused([&] { packed.fill_(1.0); }, "fills with 0 alone");
  EXPECT_EQ(packed.view_as(DType::uint8).to_vector<std::uint8_t>(), std::vector<std::uint8_t>(16, 0));
}

}  // namespace
