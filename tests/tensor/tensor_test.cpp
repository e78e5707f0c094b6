// Host tensors: factories, views, copies, elementwise ops with broadcasting, reductions, matmul,
// comparisons and the error messages — the same code paths the CUDA back end shares.

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "cudakit/core/error.hpp"
#include "cudakit/tensor/compare.hpp"
#include "cudakit/tensor/elementwise.hpp"
#include "cudakit/tensor/factories.hpp"
#include "cudakit/tensor/matmul.hpp"
#include "cudakit/tensor/reduction.hpp"

namespace {

namespace ten = cudakit::tensor;
using ten::DType;
using ten::Shape;
using ten::Tensor;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const cudakit::InvalidArgumentError& e) {
    return e.what();
  }
  return "no InvalidArgumentError";
}

#define EXPECT_ERROR_MENTIONS(statement, text)                         \
  do {                                                                 \
    const std::string message_ = error_of([&] { (void)(statement); }); \
    EXPECT_NE(message_.find(text), std::string::npos) << message_;     \
  } while (0)

Tensor iota(const Shape& shape, DType dtype = DType::float32) {
  return ten::arange(0, static_cast<double>(ten::shape_numel(shape)), 1, {dtype}).view(shape);
}

template <class T>
std::vector<T> values(const Tensor& t) {
  return t.to_vector<T>();
}

TEST(TensorBasics, FactoriesAndMetadata) {
  const Tensor z = ten::zeros({2, 3});
  EXPECT_EQ(z.sizes(), (Shape{2, 3}));
  EXPECT_EQ(z.strides(), (Shape{3, 1}));
  EXPECT_EQ(z.numel(), 6);
  EXPECT_TRUE(z.is_contiguous());
  EXPECT_TRUE(z.device().is_cpu());
  EXPECT_EQ(z.description(), "float32[2, 3] on cpu");
  EXPECT_EQ(values<float>(z), std::vector<float>(6, 0.0f));
  EXPECT_EQ(values<int>(ten::ones({4}, {DType::int32})), std::vector<int>(4, 1));
  EXPECT_EQ(values<double>(ten::full({2}, 2.5, {DType::float64})), (std::vector<double>{2.5, 2.5}));
  EXPECT_EQ(values<double>(ten::arange(1, 2, 0.25, {DType::float64})),
            (std::vector<double>{1, 1.25, 1.5, 1.75}));
  EXPECT_EQ(values<std::int64_t>(ten::arange(5, {DType::int64})),
            (std::vector<std::int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(values<float>(ten::arange(3, 0, -1)), (std::vector<float>{3, 2, 1}));
  const Tensor h = ten::from_host(std::vector<float>{1, 2, 3, 4, 5, 6}, {3, 2});
  EXPECT_EQ(h.sizes(), (Shape{3, 2}));
  EXPECT_EQ(h.data<float>()[5], 6.0f);
  EXPECT_EQ(ten::sum(h).item(), 21.0);
  const Tensor e = ten::empty({0, 3});
  EXPECT_EQ(e.numel(), 0);
  EXPECT_EQ(ten::sum(e).item(), 0.0);
}

TEST(TensorBasics, DtypesConvertOnCopy) {
  const Tensor f = ten::from_host(std::vector<float>{-1.5f, 0.0f, 2.75f, 65504.0f}, {4});
  EXPECT_EQ(values<double>(f.to(DType::float16)), (std::vector<double>{-1.5, 0, 2.75, 65504}));
  EXPECT_EQ(values<double>(f.to(DType::bfloat16)), (std::vector<double>{-1.5, 0, 2.75, 65536}));
  EXPECT_EQ(values<std::int64_t>(f.to(DType::int64)), (std::vector<std::int64_t>{-1, 0, 2, 65504}));
  EXPECT_EQ(values<bool>(f), (std::vector<bool>{true, false, true, true}));
  EXPECT_EQ(ten::parse_dtype("bfloat16"), DType::bfloat16);
  EXPECT_ERROR_MENTIONS(ten::parse_dtype("float8"), "unknown dtype 'float8'");
  EXPECT_EQ(ten::element_size(DType::bfloat16), 2u);
}

TEST(TensorViews, TransposeViewReshapeSlice) {
  const Tensor a = iota({2, 3});
  const Tensor t = a.t();
  EXPECT_EQ(t.sizes(), (Shape{3, 2}));
  EXPECT_EQ(t.strides(), (Shape{1, 3}));
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_EQ(values<float>(t), (std::vector<float>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(t.storage(), a.storage());
  EXPECT_EQ(values<float>(a.view({3, -1})), (std::vector<float>{0, 1, 2, 3, 4, 5}));
  EXPECT_ERROR_MENTIONS(t.view({6}), "use reshape()");
  const Tensor r = t.reshape({6});
  EXPECT_NE(r.storage(), a.storage());  // a copy was needed
  EXPECT_EQ(values<float>(r), (std::vector<float>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(a.reshape({3, 2}).storage(), a.storage());  // a view sufficed
  const Tensor s = iota({4, 5}).slice(1, 1, 5, 2);
  EXPECT_EQ(s.sizes(), (Shape{4, 2}));
  EXPECT_EQ(s.storage_offset(), 1);
  EXPECT_EQ(values<float>(s), (std::vector<float>{1, 3, 6, 8, 11, 13, 16, 18}));
  EXPECT_EQ(values<float>(iota({5}).slice(0, -2, 100)), (std::vector<float>{3, 4}));
  EXPECT_EQ(values<float>(iota({2, 2, 2}).transpose(0, 2).contiguous()),
            (std::vector<float>{0, 4, 2, 6, 1, 5, 3, 7}));
  EXPECT_ERROR_MENTIONS(a.view({4}), "shape [4] is invalid");
  EXPECT_ERROR_MENTIONS(iota({2, 2, 2}).t(), "2-D");
  EXPECT_ERROR_MENTIONS(a.transpose(0, 5), "dimension 5 out of range");
  EXPECT_ERROR_MENTIONS(Tensor(a.storage(), DType::float32, {7}, {1}), "reaches outside");
  EXPECT_EQ(a.view_as(DType::int32).data<std::int32_t>()[1], 0x3f800000);
  EXPECT_ERROR_MENTIONS(a.view_as(DType::float64), "element sizes differ");
}

TEST(TensorCopy, StridedBroadcastingAndErrors) {
  Tensor dst = ten::zeros({3, 4}, {DType::float64});
  dst.slice(1, 0, 4, 2).copy_(ten::from_host(std::vector<float>{7, 8}, {2}));
  EXPECT_EQ(values<double>(dst), (std::vector<double>{7, 0, 8, 0, 7, 0, 8, 0, 7, 0, 8, 0}));
  EXPECT_ERROR_MENTIONS(dst.copy_(ten::zeros({5})), "cannot copy float32[5] on cpu into float64[3, 4]");
  Tensor filled = ten::empty({4}, {DType::float32, ten::Device::cpu()});
  filled.fill_(3);
  EXPECT_EQ(values<float>(filled), std::vector<float>(4, 3.0f));
  EXPECT_THROW((void)Tensor().device(), cudakit::StateError);
}

TEST(TensorElementwise, BroadcastingScalarsAndUnaryOps) {
  const Tensor a = iota({2, 3});
  const Tensor row = ten::from_host(std::vector<float>{10, 20, 30}, {3});
  const Tensor col = ten::from_host(std::vector<float>{1, 2}, {2, 1});
  EXPECT_EQ(values<float>(ten::add(a, row)), (std::vector<float>{10, 21, 32, 13, 24, 35}));
  EXPECT_EQ(values<float>(ten::mul(a, col)), (std::vector<float>{0, 1, 2, 6, 8, 10}));
  EXPECT_EQ(values<float>(ten::sub(col, row)), (std::vector<float>{-9, -19, -29, -8, -18, -28}));
  EXPECT_EQ(values<float>(ten::div(row, ten::full({1}, 10))), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(values<float>(ten::add(a.t(), 1.0)), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(values<float>(ten::sub(a, 1.0)), (std::vector<float>{-1, 0, 1, 2, 3, 4}));
  EXPECT_EQ(values<float>(ten::mul(a, 0.5)), (std::vector<float>{0, 0.5, 1, 1.5, 2, 2.5}));
  EXPECT_EQ(values<float>(ten::div(a, 2.0)), (std::vector<float>{0, 0.5, 1, 1.5, 2, 2.5}));
  EXPECT_EQ(values<float>(ten::relu(ten::sub(a, 2.0))), (std::vector<float>{0, 0, 0, 1, 2, 3}));
  EXPECT_EQ(values<float>(ten::neg(row)), (std::vector<float>{-10, -20, -30}));
  EXPECT_TRUE(ten::allclose(ten::exp(iota({3})), ten::from_host(std::vector<float>{1, 2.7182817f, 7.389056f}, {3})));
  EXPECT_EQ(values<int>(ten::add(iota({3}, DType::int32), 2.0)), (std::vector<int>{2, 3, 4}));
  EXPECT_EQ(values<double>(ten::add(iota({2}, DType::float16), iota({2}, DType::float16))),
            (std::vector<double>{0, 2}));
  EXPECT_EQ(values<double>(ten::mul(iota({2}, DType::bfloat16), 3.0)), (std::vector<double>{0, 3}));
}

TEST(TensorElementwise, ErrorsNameShapesDtypesAndDevices) {
  EXPECT_ERROR_MENTIONS(ten::add(iota({2, 3}), iota({4})),
                        "shapes do not broadcast: float32[2, 3] on cpu and float32[4] on cpu");
  EXPECT_ERROR_MENTIONS(ten::add(iota({2}), iota({2}, DType::float64)),
                        "dtypes differ: float32[2] on cpu and float64[2] on cpu");
  EXPECT_ERROR_MENTIONS(ten::div(iota({2}, DType::int32), iota({2}, DType::int32)), "floating dtype");
  EXPECT_ERROR_MENTIONS(ten::exp(iota({2}, DType::int64)), "floating dtype");
  EXPECT_ERROR_MENTIONS(ten::neg(ten::zeros({2}, {DType::bool_})), "bool");
  EXPECT_EQ(ten::broadcast_shapes({3, 1, 5}, {4, 1}), (Shape{3, 4, 5}));
}

TEST(TensorReduction, SumAndMean) {
  const Tensor a = iota({2, 3});
  EXPECT_EQ(ten::sum(a).item(), 15.0);
  EXPECT_EQ(ten::mean(a).item(), 2.5);
  EXPECT_EQ(values<float>(ten::sum(a, 0)), (std::vector<float>{3, 5, 7}));
  EXPECT_EQ(values<float>(ten::sum(a, -1)), (std::vector<float>{3, 12}));
  EXPECT_EQ(ten::sum(a, 1, true).sizes(), (Shape{2, 1}));
  EXPECT_EQ(values<float>(ten::mean(a.t(), 1)), (std::vector<float>{1.5, 2.5, 3.5}));
  const Tensor i = ten::sum(iota({4}, DType::int32));
  EXPECT_EQ(i.dtype(), DType::int64);
  EXPECT_EQ(i.item(), 6.0);
  EXPECT_EQ(ten::sum(ten::ones({1000}, {DType::float16})).item(), 1000.0);  // float accumulation
  EXPECT_ERROR_MENTIONS(ten::mean(iota({3}, DType::int32)), "floating");
  EXPECT_ERROR_MENTIONS(ten::sum(a, 2), "dimension 2 out of range");
}

TEST(TensorMatmul, ShapesLayoutsAndErrors) {
  const Tensor a = iota({2, 3});  // [[0 1 2] [3 4 5]]
  const Tensor b = iota({3, 2});  // [[0 1] [2 3] [4 5]]
  EXPECT_EQ(values<float>(ten::matmul(a, b)), (std::vector<float>{10, 13, 28, 40}));
  EXPECT_EQ(values<float>(ten::matmul(b.t(), a.t())), (std::vector<float>{10, 28, 13, 40}));
  const Tensor batch = iota({2, 2, 3});
  const Tensor c = ten::matmul(batch, b);
  EXPECT_EQ(c.sizes(), (Shape{2, 2, 2}));
  EXPECT_EQ(values<float>(c), (std::vector<float>{10, 13, 28, 40, 46, 67, 64, 94}));
  EXPECT_TRUE(ten::equal(ten::matmul(batch, ten::ones({2, 3, 1})), ten::sum(batch, 2, true)));
  EXPECT_EQ(values<double>(ten::matmul(a.to(DType::bfloat16), b.to(DType::bfloat16))),
            (std::vector<double>{10, 13, 28, 40}));
  EXPECT_ERROR_MENTIONS(ten::matmul(a, a), "inner dimensions differ: float32[2, 3] on cpu x float32[2, 3] on cpu");
  EXPECT_ERROR_MENTIONS(ten::matmul(a, b.to(DType::float64)), "dtypes differ");
  EXPECT_ERROR_MENTIONS(ten::matmul(iota({2}), b), "supports");
  EXPECT_ERROR_MENTIONS(ten::matmul(iota({2, 2}, DType::int32), iota({2, 2}, DType::int32)), "float32");
}

TEST(TensorCompare, EqualAllcloseAndMismatches) {
  const Tensor a = ten::from_host(std::vector<float>{1, 2, 3}, {3});
  const Tensor b = ten::from_host(std::vector<float>{1, 2, 3.0001f}, {3});
  EXPECT_TRUE(ten::equal(a, a));
  EXPECT_FALSE(ten::equal(a, b));
  EXPECT_FALSE(ten::equal(a, a.view({1, 3})));
  EXPECT_EQ(ten::count_mismatches(a, b), 1);
  EXPECT_TRUE(ten::allclose(a, b, 1e-4));
  EXPECT_FALSE(ten::allclose(a, b, 1e-6, 1e-6));
  const Tensor nan = ten::full({2}, std::nan(""));
  EXPECT_FALSE(ten::equal(nan, nan));
  EXPECT_TRUE(ten::allclose(nan, nan, 0, 0, /*equal_nan=*/true));
  EXPECT_ERROR_MENTIONS(ten::equal(a, a.to(DType::float64)), "one dtype and device");
}

}  // namespace
