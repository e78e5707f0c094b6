// The GPU tier of the new dtypes: casts and fill in kernels give the host reference's bytes —
// every FP8 bit pattern to float and back, many floats to FP8 (ties, overflow, NaN, subnormals),
// complex and the narrow and unsigned integers — and copies of every dtype keep their bytes.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <limits>
#include <random>
#include <vector>

#include "cudakit/tensor/factories.hpp"
#include "support/gpu_test.hpp"

namespace {

namespace ten = cudakit::tensor;
using ten::Device;
using ten::DType;
using ten::Tensor;

const Device kCuda{Device::Type::cuda, 0};

std::vector<std::uint8_t> bytes_of(const Tensor& t) {
  const Tensor host = t.to_host();
  std::vector<std::uint8_t> out(host.nbytes());
  if (!out.empty()) std::memcpy(out.data(), host.data_ptr(), out.size());
  return out;
}

// Floats probing the FP8 formats: every FP8 value of both formats, the midpoints of float8
// neighbours with an ulp either side, thresholds, specials, random bits.
std::vector<float> probe_floats() {
  std::vector<float> out;
  std::vector<std::uint8_t> codes(256);
  for (int i = 0; i < 256; ++i) codes[i] = static_cast<std::uint8_t>(i);
  for (const DType format : {DType::float8_e4m3fn, DType::float8_e5m2, DType::float8_e8m0fnu}) {
    const std::vector<float> values = ten::from_host(codes.data(), {256}, DType::uint8).view_as(format).to_vector<float>();
    for (std::size_t i = 0; i < values.size(); ++i) {
      out.push_back(values[i]);
      if (i + 1 < values.size() && std::isfinite(values[i]) && std::isfinite(values[i + 1])) {
        const float mid = (values[i] + values[i + 1]) / 2;
        out.push_back(mid);
        out.push_back(std::nextafter(mid, -std::numeric_limits<float>::infinity()));
        out.push_back(std::nextafter(mid, std::numeric_limits<float>::infinity()));
      }
    }
  }
  for (const float f : {0.0f, -0.0f, 448.0f, 464.0f, 470.0f, 480.0f, 57344.0f, 61440.0f, 65536.0f, 1e30f,
                        std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                        std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::denorm_min()}) {
    out.push_back(f);
  }
  std::mt19937 rng(7);
  for (int i = 0; i < 100000; ++i) {
    std::uint32_t bits = rng();
    float f;
    std::memcpy(&f, &bits, sizeof f);
    out.push_back(f);
  }
  return out;
}

// t's values as float64 on the host.
std::vector<double> values_of(const Tensor& t) {
  const Tensor wide = t.to_host().to(DType::float64);
  const auto bytes = bytes_of(wide);
  std::vector<double> out(bytes.size() / sizeof(double));
  std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

TEST(DTypeGpu, Fp8CastsMatchTheHostBitForBit) {
  CUDAKIT_REQUIRE_GPU();
  const std::vector<float> floats = probe_floats();
  const Tensor host = ten::from_host(floats);
  const Tensor device = host.to(kCuda);
  for (const DType format : {DType::float8_e4m3fn, DType::float8_e5m2, DType::float8_e8m0fnu}) {
    SCOPED_TRACE(std::string(ten::dtype_name(format)));
    EXPECT_EQ(bytes_of(device.to(format)), bytes_of(host.to(format)));
    // float64 and bfloat16 sources go through float, on both sides. The probe's random bits hold
    // NaNs of either sign with payloads, and what the first conversion makes of a NaN is the
    // hardware's (a GPU may return its canonical, positive NaN where x86 keeps the sign and quiets
    // the payload), so that FP8 NaN's sign may differ: every value equal, every NaN a NaN.
    for (const DType via : {DType::float64, DType::bfloat16}) {
      const std::vector<double> on_gpu = values_of(device.to(via).to(format));
      const std::vector<double> on_host = values_of(host.to(via).to(format));
      ASSERT_EQ(on_gpu.size(), on_host.size());
      std::size_t differ = 0;
      for (std::size_t i = 0; i < on_gpu.size(); ++i) {
        if (std::isnan(on_gpu[i]) ? !std::isnan(on_host[i]) : on_gpu[i] != on_host[i]) {
          if (++differ <= 5) {
            ADD_FAILURE() << "float " << floats[i] << " via " << ten::dtype_name(via) << ": " << on_gpu[i]
                          << " on the GPU against " << on_host[i];
          }
        }
      }
      EXPECT_EQ(differ, 0u) << "via " << ten::dtype_name(via);
    }
    // Every bit pattern back to float32, float16 and int32.
    std::vector<std::uint8_t> codes(256);
    for (int i = 0; i < 256; ++i) codes[i] = static_cast<std::uint8_t>(i);
    const Tensor all = ten::from_host(codes.data(), {256}, DType::uint8).view_as(format);
    EXPECT_EQ(bytes_of(all.to(kCuda).to(DType::float32)), bytes_of(all.to(DType::float32)));
    // Widening or narrowing a NaN further is the hardware's: x86 quiets e8m0fnu's signalling NaN
    // (0x7f800001) on its way to float64, the GPU's conversion may make its own NaN. Every value
    // equal, every NaN a NaN.
    for (const DType to : {DType::float16, DType::float64}) {
      const std::vector<double> on_gpu = values_of(all.to(kCuda).to(to));
      const std::vector<double> on_host = values_of(all.to(to));
      ASSERT_EQ(on_gpu.size(), on_host.size());
      for (std::size_t i = 0; i < on_gpu.size(); ++i) {
        EXPECT_TRUE(std::isnan(on_gpu[i]) ? std::isnan(on_host[i]) : on_gpu[i] == on_host[i])
            << "code " << i << " to " << ten::dtype_name(to) << ": " << on_gpu[i] << " against " << on_host[i];
      }
    }
    // Fill in a kernel agrees with the host's.
    EXPECT_EQ(bytes_of(ten::full({1000}, 0.3, {.dtype = format, .device = kCuda})),
              bytes_of(ten::full({1000}, 0.3, {.dtype = format})));
  }
}

TEST(DTypeGpu, ComplexAndIntegerCastsMatchTheHost) {
  CUDAKIT_REQUIRE_GPU();
  // Values every integer dtype holds (casts out of range are undefined in C++, as in torch).
  std::vector<double> values;
  for (int i = 0; i < 1000; ++i) values.push_back((i % 121) + 0.5 * (i % 3));
  const Tensor host = ten::from_host(values);
  const Tensor device = host.to(kCuda);
  for (const DType to : {DType::int8, DType::int16, DType::uint16, DType::uint32, DType::uint64,
                         DType::complex64, DType::complex128, DType::float8_e4m3fn}) {
    SCOPED_TRACE(std::string(ten::dtype_name(to)));
    const Tensor on_device = device.to(to);
    EXPECT_EQ(bytes_of(on_device), bytes_of(host.to(to)));
    for (const DType back : {DType::float32, DType::int64, DType::complex128, DType::bool_}) {
      EXPECT_EQ(bytes_of(on_device.to(back)), bytes_of(host.to(to).to(back))) << ten::dtype_name(back);
    }
    // A strided copy on the device keeps the bytes.
    const Tensor square = on_device.view({10, 100});
    Tensor transposed = ten::empty({100, 10}, {.dtype = to, .device = kCuda});
    transposed.copy_(square.t());
    EXPECT_EQ(bytes_of(transposed.t().contiguous()), bytes_of(square));
  }
  // Packed FP4 moves as bytes.
  Tensor packed = ten::from_host(std::vector<std::uint8_t>(64, 0x5a), {8, 8}, kCuda).view_as(DType::float4_e2m1fn_x2);
  Tensor copy = ten::zeros({8, 8}, {.dtype = DType::float4_e2m1fn_x2, .device = kCuda});
  copy.copy_(packed.t());
  EXPECT_EQ(bytes_of(copy), std::vector<std::uint8_t>(64, 0x5a));
}

}  // namespace
