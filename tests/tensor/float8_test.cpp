// The FP8 conversions against references written from the formats' definitions (values as
// sums of powers of two, rounding as "nearest representable, ties to the even code"), over all
// 256 bit patterns and many floats: every code's value, the ties between neighbours and a
// float's ulp either side of them, subnormals, the overflow thresholds, infinities and NaN.
// See Note [FP8 conversions].

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <vector>

#include "cudakit/tensor/detail/float8.hpp"

namespace {

namespace det = cudakit::tensor::detail;

struct Format {
  int mantissa_bits;
  int bias;
  bool has_infinity;  // e5m2: exponent all ones, mantissa 0
};
constexpr Format kE4M3{3, 7, false};
constexpr Format kE5M2{2, 15, true};

// The value of a code from the definition; nullopt for NaN; +-infinity for e5m2's.
std::optional<double> reference_value(Format f, std::uint8_t code) {
  const int exponent_bits = 7 - f.mantissa_bits;
  const int max_field = (1 << exponent_bits) - 1;
  const int field = (code & 0x7f) >> f.mantissa_bits;
  const int mantissa = code & ((1 << f.mantissa_bits) - 1);
  const double sign = (code & 0x80) ? -1.0 : 1.0;
  if (f.has_infinity && field == max_field) {
    if (mantissa != 0) return std::nullopt;
    return sign * std::numeric_limits<double>::infinity();
  }
  if (!f.has_infinity && (code & 0x7f) == 0x7f) return std::nullopt;
  if (field == 0) return sign * std::ldexp(mantissa, 1 - f.bias - f.mantissa_bits);
  return sign * std::ldexp((1 << f.mantissa_bits) + mantissa, field - f.bias - f.mantissa_bits);
}

// torch's float -> FP8, from the rule: round |x| to the nearest of the format's magnitudes, ties
// to the even code, with the code one past the largest finite one (e4m3fn: NaN at 480; e5m2:
// infinity at 65536) taking part in the rounding; anything at or past that value, and NaN, is
// that code (NaN for NaN).
std::uint8_t reference_encode(Format f, float x) {
  const std::uint8_t sign = std::signbit(x) ? 0x80 : 0x00;
  const std::uint8_t top = f.has_infinity ? 0x7c : 0x7f;  // the code past the largest finite one
  if (std::isnan(x)) return sign | 0x7f;
  const double magnitude = std::fabs(static_cast<double>(x));
  const double top_value = f.has_infinity ? 65536.0 : 480.0;
  if (magnitude >= top_value) return sign | top;
  std::uint8_t best = 0;
  double best_distance = std::numeric_limits<double>::infinity();
  for (int code = 0; code <= top; ++code) {
    const double value = code == top ? top_value : *reference_value(f, static_cast<std::uint8_t>(code));
    const double distance = std::fabs(value - magnitude);
    if (distance < best_distance || (distance == best_distance && (code & 1) == 0)) {
      best = static_cast<std::uint8_t>(code);
      best_distance = distance;
    }
  }
  return sign | best;
}

// torch's float -> E8M0: 2^e for a normal |x| = 1.f * 2^e with f < 1/2, else 2^(e+1); 2^-127 for
// |x| up to 2^-127, 2^-126 above it among the subnormals; NaN past 2^127 and for inf and NaN.
std::uint8_t reference_e8m0(float x) {
  if (!std::isfinite(x)) return 0xff;
  const double magnitude = std::fabs(static_cast<double>(x));
  if (magnitude < std::ldexp(1.0, -126)) return magnitude <= std::ldexp(1.0, -127) ? 0 : 1;
  int e = 0;
  const double fraction = std::frexp(magnitude, &e);  // magnitude = fraction * 2^e, fraction in [0.5, 1)
  const int exponent = (fraction < 0.75 ? e - 1 : e) + 127;
  return exponent >= 255 ? 0xff : static_cast<std::uint8_t>(exponent);
}

float e8m0_reference_value(std::uint8_t code) {
  return code == 0xff ? std::numeric_limits<float>::quiet_NaN() : std::ldexp(1.0f, code - 127);
}

// Floats that probe a format: every code's value, the midpoints of neighbours and one float ulp
// either side, both signs, subnormal floats, thresholds, random floats over the exponent range.
std::vector<float> probe_floats(Format f) {
  std::vector<double> values;
  for (int code = 0; code < 0x80; ++code) {
    const auto v = reference_value(f, static_cast<std::uint8_t>(code));
    if (v && std::isfinite(*v)) values.push_back(*v);
  }
  values.push_back(f.has_infinity ? 65536.0 : 480.0);
  std::vector<float> out;
  for (std::size_t i = 0; i < values.size(); ++i) {
    out.push_back(static_cast<float>(values[i]));
    if (i + 1 < values.size()) {
      const float mid = static_cast<float>((values[i] + values[i + 1]) / 2);  // exact: few bits
      out.push_back(mid);
      out.push_back(std::nextafter(mid, 0.0f));
      out.push_back(std::nextafter(mid, std::numeric_limits<float>::infinity()));
    }
  }
  for (const float special : {std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN(),
                              std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::min(),
                              std::numeric_limits<float>::max(), 1e-30f, 3e-3f, 447.9f, 464.0f, 479.99f,
                              480.0f, 57344.0f, 61439.99f, 61440.0f, 65535.99f, 1e6f}) {
    out.push_back(special);
  }
  std::mt19937 rng(20261204);
  std::uniform_int_distribution<std::uint32_t> bits(0, 0x7f7fffffu);
  for (int i = 0; i < 20000; ++i) out.push_back(det::float_from_bits(bits(rng)));
  std::uniform_real_distribution<float> near(-70000.0f, 70000.0f);
  for (int i = 0; i < 20000; ++i) out.push_back(near(rng));
  const std::size_t n = out.size();
  for (std::size_t i = 0; i < n; ++i) out.push_back(-out[i]);
  return out;
}

bool same_value(float a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

TEST(Float8, E4m3fnDecodesEveryCodeToItsValue) {
  for (int code = 0; code < 256; ++code) {
    const auto expected = reference_value(kE4M3, static_cast<std::uint8_t>(code));
    const float got = det::e4m3fn_to_float(static_cast<std::uint8_t>(code));
    if (!expected) {
      EXPECT_TRUE(std::isnan(got)) << code;
      EXPECT_EQ(std::signbit(got), (code & 0x80) != 0) << code;
    } else {
      EXPECT_EQ(got, *expected) << "code " << code;
      EXPECT_EQ(std::signbit(got), (code & 0x80) != 0) << code;  // -0 stays -0
    }
  }
}

TEST(Float8, E5m2DecodesEveryCodeToItsValue) {
  for (int code = 0; code < 256; ++code) {
    const auto expected = reference_value(kE5M2, static_cast<std::uint8_t>(code));
    const float got = det::e5m2_to_float(static_cast<std::uint8_t>(code));
    if (!expected) EXPECT_TRUE(std::isnan(got)) << code;
    else EXPECT_EQ(got, *expected) << "code " << code;
  }
}

TEST(Float8, E8m0fnuDecodesEveryCodeToAPowerOfTwo) {
  for (int code = 0; code < 256; ++code) {
    EXPECT_TRUE(same_value(det::e8m0fnu_to_float(static_cast<std::uint8_t>(code)),
                           e8m0_reference_value(static_cast<std::uint8_t>(code))))
        << code;
  }
  EXPECT_EQ(det::e8m0fnu_to_float(0), std::ldexp(1.0f, -127));  // not zero: the format has none
}

TEST(Float8, EveryCodeSurvivesTheRoundTripThroughFloat) {
  for (int code = 0; code < 256; ++code) {
    const auto c = static_cast<std::uint8_t>(code);
    EXPECT_EQ(det::float_to_e4m3fn(det::e4m3fn_to_float(c)), c) << code;  // its NaNs are 0x7f and 0xff
    EXPECT_EQ(det::float_to_e8m0fnu(det::e8m0fnu_to_float(c)), c) << code;
    if (reference_value(kE5M2, c)) EXPECT_EQ(det::float_to_e5m2(det::e5m2_to_float(c)), c) << code;
    else EXPECT_EQ(det::float_to_e5m2(det::e5m2_to_float(c)), (c & 0x80) | 0x7f) << code;
  }
}

TEST(Float8, E4m3fnRoundsToNearestEvenAndOverflowsToNaN) {
  for (const float x : probe_floats(kE4M3)) {
    ASSERT_EQ(det::float_to_e4m3fn(x), reference_encode(kE4M3, x)) << "x = " << x;
  }
  // The rules, spelled out: no saturation, ties to even, subnormals kept.
  EXPECT_EQ(det::float_to_e4m3fn(448.0f), 0x7e);
  EXPECT_EQ(det::float_to_e4m3fn(464.0f), 0x7e);  // the tie with 480 goes to the even 448
  EXPECT_EQ(det::float_to_e4m3fn(470.0f), 0x7f);  // NaN, not 448
  EXPECT_EQ(det::float_to_e4m3fn(1e9f), 0x7f);
  EXPECT_EQ(det::float_to_e4m3fn(-std::numeric_limits<float>::infinity()), 0xff);
  EXPECT_EQ(det::float_to_e4m3fn(std::ldexp(1.0f, -9)), 0x01);   // the smallest subnormal
  EXPECT_EQ(det::float_to_e4m3fn(std::ldexp(1.0f, -10)), 0x00);  // its half ties to 0
  EXPECT_EQ(det::float_to_e4m3fn(-0.0f), 0x80);
}

TEST(Float8, E5m2RoundsToNearestEvenAndOverflowsToInfinity) {
  for (const float x : probe_floats(kE5M2)) {
    ASSERT_EQ(det::float_to_e5m2(x), reference_encode(kE5M2, x)) << "x = " << x;
  }
  EXPECT_EQ(det::float_to_e5m2(57344.0f), 0x7b);
  EXPECT_EQ(det::float_to_e5m2(61440.0f), 0x7c);  // the tie goes to the even code: infinity
  EXPECT_EQ(det::float_to_e5m2(1e9f), 0x7c);
  EXPECT_EQ(det::float_to_e5m2(-std::numeric_limits<float>::infinity()), 0xfc);
  EXPECT_EQ(det::float_to_e5m2(std::numeric_limits<float>::quiet_NaN()), 0x7f);
}

TEST(Float8, E8m0fnuKeepsTheExponentRoundedByTheGuardBit) {
  for (const float x : probe_floats(kE4M3)) ASSERT_EQ(det::float_to_e8m0fnu(x), reference_e8m0(x)) << x;
  for (const float x : probe_floats(kE5M2)) ASSERT_EQ(det::float_to_e8m0fnu(x), reference_e8m0(x)) << x;
  EXPECT_EQ(det::float_to_e8m0fnu(1.0f), 127);
  EXPECT_EQ(det::float_to_e8m0fnu(1.5f), 128);   // ties up
  EXPECT_EQ(det::float_to_e8m0fnu(1.49f), 127);
  EXPECT_EQ(det::float_to_e8m0fnu(-4.0f), 129);  // the sign is dropped
  EXPECT_EQ(det::float_to_e8m0fnu(0.0f), 0);     // 2^-127, the smallest value
  EXPECT_EQ(det::float_to_e8m0fnu(std::numeric_limits<float>::max()), 0xff);
  EXPECT_EQ(det::float_to_e8m0fnu(std::numeric_limits<float>::infinity()), 0xff);
}

}  // namespace
