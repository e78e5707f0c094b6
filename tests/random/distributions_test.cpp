// The distributions on the CPU reference path (the bits the GPU must reproduce): goodness of fit
// (Kolmogorov-Smirnov, chi-square), accuracy of the transforms, counters and offsets, strided
// outputs, and the errors.

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <functional>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "cudakit/core/error.hpp"
#include "cudakit/random/detail/distributions.hpp"
#include "cudakit/random/distributions.hpp"
#include "cudakit/random/generator.hpp"
#include "cudakit/tensor/compare.hpp"
#include "cudakit/tensor/factories.hpp"

namespace {

namespace rnd = cudakit::random;
namespace ten = cudakit::tensor;
using ten::DType;
using ten::Tensor;

constexpr std::int64_t kSamples = 1 << 20;

// Kolmogorov-Smirnov statistic of `xs` against `cdf`.
double ks_statistic(std::vector<double> xs, const std::function<double(double)>& cdf) {
  std::sort(xs.begin(), xs.end());
  const double n = static_cast<double>(xs.size());
  double d = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const double f = cdf(xs[i]);
    d = std::max({d, f - i / n, (i + 1) / n - f});
  }
  return d;
}

// Chi-square statistic of `xs` in `bins` bins of equal probability under `cdf`.
double chi_square(const std::vector<double>& xs, const std::function<double(double)>& cdf,
                  int bins) {
  std::vector<double> counts(bins, 0.0);
  for (const double x : xs) {
    const int b = std::clamp(static_cast<int>(cdf(x) * bins), 0, bins - 1);
    counts[b] += 1;
  }
  const double expected = static_cast<double>(xs.size()) / bins;
  double chi = 0;
  for (const double c : counts) chi += (c - expected) * (c - expected) / expected;
  return chi;
}

// For 1 MiB samples: KS at alpha = 0.001 is 1.95 / sqrt(n); chi-square with 255 degrees of
// freedom at alpha = 0.001 is 330.5. Seeds are fixed, so the tests are deterministic.
const double kKsCritical = 1.95 / std::sqrt(static_cast<double>(kSamples));
constexpr double kChiCritical = 330.5;
constexpr int kBins = 256;

std::vector<double> sample(const std::function<void(Tensor&, rnd::Generator&)>& fill, DType dtype,
                           std::uint64_t seed = 1234) {
  rnd::Generator gen(ten::Device::cpu(), seed);
  Tensor t = ten::empty({kSamples}, {dtype});
  fill(t, gen);
  return t.to_vector<double>();
}

double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

struct FitCase {
  const char* name;
  std::function<void(Tensor&, rnd::Generator&)> fill;
  std::function<double(double)> cdf;
};

std::vector<FitCase> fit_cases() {
  return {
      {"uniform", [](Tensor& t, rnd::Generator& g) { rnd::uniform_(t, 0, 1, &g); },
       [](double x) { return std::clamp(x, 0.0, 1.0); }},
      {"uniform(-2,3)", [](Tensor& t, rnd::Generator& g) { rnd::uniform_(t, -2, 3, &g); },
       [](double x) { return std::clamp((x + 2) / 5, 0.0, 1.0); }},
      {"normal", [](Tensor& t, rnd::Generator& g) { rnd::normal_(t, 0, 1, &g); }, normal_cdf},
      {"normal(3,2)", [](Tensor& t, rnd::Generator& g) { rnd::normal_(t, 3, 2, &g); },
       [](double x) { return normal_cdf((x - 3) / 2); }},
      {"exponential", [](Tensor& t, rnd::Generator& g) { rnd::exponential_(t, 1, &g); },
       [](double x) { return x < 0 ? 0 : -std::expm1(-x); }},
      {"exponential(4)", [](Tensor& t, rnd::Generator& g) { rnd::exponential_(t, 4, &g); },
       [](double x) { return x < 0 ? 0 : -std::expm1(-4 * x); }},
  };
}

TEST(RandomDistributions, KolmogorovSmirnovAndChiSquareFloat32AndFloat64) {
  for (const DType dtype : {DType::float32, DType::float64}) {
    for (const FitCase& c : fit_cases()) {
      const std::vector<double> xs = sample(c.fill, dtype);
      EXPECT_LT(ks_statistic(xs, c.cdf), kKsCritical) << c.name << " " << ten::dtype_name(dtype);
      EXPECT_LT(chi_square(xs, c.cdf, kBins), kChiCritical) << c.name << " " << ten::dtype_name(dtype);
    }
  }
}

TEST(RandomDistributions, MomentsOfReducedPrecision) {
  for (const DType dtype : {DType::float16, DType::bfloat16}) {
    rnd::Generator gen(ten::Device::cpu(), 7);
    Tensor t = ten::empty({kSamples}, {dtype});
    const auto moments = [&] {
      const std::vector<double> xs = t.to_vector<double>();
      double m = 0, v = 0;
      for (const double x : xs) m += x;
      m /= xs.size();
      for (const double x : xs) v += (x - m) * (x - m);
      return std::pair{m, v / xs.size()};
    };
    rnd::uniform_(t, 0, 1, &gen);
    auto [m, v] = moments();
    EXPECT_NEAR(m, 0.5, 0.01) << ten::dtype_name(dtype);
    EXPECT_NEAR(v, 1.0 / 12, 0.005) << ten::dtype_name(dtype);
    for (const double x : t.to_vector<double>()) ASSERT_TRUE(x >= 0 && x < 1) << x;
    rnd::normal_(t, 0, 1, &gen);
    std::tie(m, v) = moments();
    EXPECT_NEAR(m, 0, 0.01) << ten::dtype_name(dtype);
    EXPECT_NEAR(v, 1, 0.01) << ten::dtype_name(dtype);
    rnd::exponential_(t, 2, &gen);
    std::tie(m, v) = moments();
    EXPECT_NEAR(m, 0.5, 0.01) << ten::dtype_name(dtype);
  }
}

TEST(RandomDistributions, UniformTakesTheTopBitsOfEachWord) {
  // See Note [Uniform bits to floats] and Note [Counter layout].
  rnd::Generator gen(ten::Device::cpu(), 99);
  gen.set_offset(5);
  Tensor t = ten::empty({6}, {DType::float32});
  rnd::uniform_(t, 0, 1, &gen);
  const std::vector<float> v = t.to_vector<float>();
  const auto w0 = rnd::detail::philox_block(99, 5), w1 = rnd::detail::philox_block(99, 6);
  const std::uint32_t words[6] = {w0.x, w0.y, w0.z, w0.w, w1.x, w1.y};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(v[i], static_cast<float>(words[i] >> 8) * 0x1p-24f) << i;
  EXPECT_EQ(gen.offset(), 7u);  // two counters, the second partly used
}

TEST(RandomDistributions, NormalMatchesLongDoubleBoxMuller) {
  const long double pi = 3.141592653589793238462643383279502884L;
  long double worst = 0;
  for (std::uint32_t i = 0; i < 200000; ++i) {
    const auto w = rnd::detail::philox_block(5, i);
    const auto z = rnd::detail::box_muller(w.x, w.y);
    // u1 as the code rounds it to float (Note [Uniform bits to floats]): below 1, within 2^-24.
    const long double u1 = rnd::detail::open_unit_below_one(w.x);
    ASSERT_LT(u1, 1.0L);
    ASSERT_NEAR(u1, (static_cast<long double>(w.x) + 0.5L) * 0x1p-32L, 0x1p-24L);
    // The angle in half turns: t = (signed)(u2 << 1) / 2^32 plus the top bit's half turn
    // (Note [Transcendental design]).
    const long double t = static_cast<std::int32_t>(w.y << 1) * 0x1p-32L + (w.y >> 31);
    const long double r = std::sqrt(-2 * std::log(u1));
    // t is rounded to float (2^-25 relative); log2 (2.2e-7), sqrt, the scaled sine and cosine
    // (~1.5e-7 with their roundings) and three more roundings: measured within 2.3e-7 of
    // max(1, r) over these 200000 pairs.
    const long double tolerance = 4e-7L * std::max(1.0L, r) + r * pi * 0x1p-25L;
    const long double dc = std::fabs(z.cos - r * std::cos(pi * t));
    const long double ds = std::fabs(z.sin - r * std::sin(pi * t));
    ASSERT_LE(dc, tolerance) << i;
    ASSERT_LE(ds, tolerance) << i;
    worst = std::max({worst, dc / std::max(1.0L, r), ds / std::max(1.0L, r)});
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", static_cast<double>(worst));
  RecordProperty("worst_error_over_max_1_r", text);
}

TEST(RandomDistributions, NormalWithMeanAndStdScalesTheStandardOne) {
  for (std::uint32_t i = 0; i < 1000; ++i) {
    const auto w = rnd::detail::philox_block(8, i);
    const auto standard = rnd::detail::box_muller(w.x, w.y);
    const auto shifted = rnd::detail::box_muller<false>(w.x, w.y, 2.0f, 3.0f);
    ASSERT_NEAR(shifted.cos, 2 + 3 * standard.cos, 1e-5f * (1 + std::fabs(standard.cos)));
    ASSERT_NEAR(shifted.sin, 2 + 3 * standard.sin, 1e-5f * (1 + std::fabs(standard.sin)));
  }
}

TEST(RandomDistributions, Log2IsAccurateOverTheUnitInterval) {
  // Every 61st float in [2^-33, 1): the inputs Box-Muller and exponential_ give it.
  const std::uint32_t lo = rnd::detail::float_to_bits(0x1p-33f), hi = rnd::detail::float_to_bits(1.0f);
  double worst_ulps = 0;
  for (std::uint32_t b = lo; b < hi; b += 61) {
    const float x = rnd::detail::bits_to_float(b);
    const long double exact = std::log2(static_cast<long double>(x));
    const float got = rnd::detail::log2_positive(x);
    // In units of the last place of the exact result (float's spacing at |exact|).
    const long double ulp = std::ldexp(1.0L, std::ilogb(static_cast<float>(exact)) - 23);
    worst_ulps = std::max(worst_ulps, static_cast<double>(std::fabs(got - exact) / ulp));
  }
  EXPECT_LT(worst_ulps, 6.0);
  RecordProperty("worst_ulps", std::to_string(worst_ulps));
}

TEST(RandomDistributions, RoundTowardZeroConversionKeepsTheTop24Bits) {
  EXPECT_EQ(rnd::detail::uint_to_float_rz(0u), 0.0f);
  EXPECT_EQ(rnd::detail::uint_to_float_rz(0xffffffu), 16777215.0f);
  EXPECT_EQ(rnd::detail::uint_to_float_rz(0x1ffffffu), 33554430.0f);  // RN would give 2^25
  EXPECT_EQ(rnd::detail::uint_to_float_rz(0xffffffffu), 4294967040.0f);
  for (std::uint32_t i = 0; i < 100000; ++i) {
    const std::uint32_t w = rnd::detail::philox_block(11, i).x >> (i % 32);
    const float f = rnd::detail::uint_to_float_rz(w);
    // Below w, by less than the spacing of 24-bit floats at w (1 below 2^24: exact there).
    const double spacing = std::ldexp(1.0, std::max(0, static_cast<int>(std::bit_width(w)) - 24));
    ASSERT_LE(static_cast<double>(f), static_cast<double>(w)) << w;
    ASSERT_LT(static_cast<double>(w) - static_cast<double>(f), spacing) << w;
  }
  EXPECT_EQ(rnd::detail::open_unit_below_one(0xffffffffu), 1.0f - 0x1p-24f);
}

TEST(RandomDistributions, ExtremesAreFiniteAndTailsReachFarEnough) {
  // The smallest radius word gives the largest |normal|: sqrt(-2 ln 2^-33) = 6.7637.
  const auto z = rnd::detail::box_muller(0u, 0u);
  EXPECT_NEAR(z.cos, 6.76372f, 1e-4f);
  // The largest radius word gives the smallest radius, sqrt(-2 ln(1 - 2^-24)) = 3.45e-4, never 0.
  const auto one = rnd::detail::box_muller(0xffffffffu, 0u);
  EXPECT_NEAR(one.cos, 3.4527e-4f, 1e-7f);
  EXPECT_GT(one.cos, 0.0f);
  const rnd::detail::Exponential<float> e{static_cast<float>(-std::log(2.0))};
  float out[4];
  e(rnd::detail::PhiloxWords{0u, 0xffffffffu, 1u << 31, 7u}, out);
  EXPECT_NEAR(out[0], 33 * std::log(2.0), 1e-4);
  EXPECT_EQ(out[1], 0.0f);
  EXPECT_FALSE(std::signbit(out[1]));  // +0, never -0
  const rnd::detail::Exponential<double> ed{-std::log(2.0)};
  double outd[2];
  ed(rnd::detail::PhiloxWords{0u, 0u, 0xffffffffu, 0xffffffffu}, outd);
  EXPECT_NEAR(outd[0], 65 * std::log(2.0), 1e-9);
  EXPECT_EQ(outd[1], 0.0);
}

TEST(RandomDistributions, BernoulliRandintAndRandperm) {
  rnd::Generator gen(ten::Device::cpu(), 3);
  Tensor b = ten::empty({kSamples}, {DType::float32});
  rnd::bernoulli_(b, 0.3, &gen);
  double ones = 0;
  for (const float x : b.to_vector<float>()) {
    ASSERT_TRUE(x == 0 || x == 1);
    ones += x;
  }
  EXPECT_NEAR(ones / kSamples, 0.3, 0.003);
  Tensor all = ten::empty({100}, {DType::bool_});
  rnd::bernoulli_(all, 1.0, &gen);
  for (const bool x : all.to_vector<bool>()) EXPECT_TRUE(x);

  const Tensor r = rnd::randint(-3, 5, {kSamples}, {DType::int64}, &gen);
  std::vector<double> counts(8, 0);
  for (const std::int64_t x : r.to_vector<std::int64_t>()) {
    ASSERT_TRUE(x >= -3 && x < 5) << x;
    counts[x + 3] += 1;
  }
  double chi = 0;
  for (const double c : counts) chi += (c - kSamples / 8.0) * (c - kSamples / 8.0) / (kSamples / 8.0);
  EXPECT_LT(chi, 24.3);  // 7 degrees of freedom, alpha = 0.001
  const Tensor wide = rnd::randint(0, std::int64_t{1} << 40, {1000}, {DType::int64}, &gen);
  std::int64_t max = 0;
  for (const std::int64_t x : wide.to_vector<std::int64_t>()) max = std::max(max, x);
  EXPECT_GT(max, std::int64_t{1} << 38);
  EXPECT_LT(max, std::int64_t{1} << 40);

  const Tensor p = rnd::randperm(1000, {DType::int64}, &gen);
  std::vector<std::int64_t> v = p.to_vector<std::int64_t>();
  EXPECT_FALSE(std::is_sorted(v.begin(), v.end()));
  std::sort(v.begin(), v.end());
  for (std::int64_t i = 0; i < 1000; ++i) ASSERT_EQ(v[i], i);
}

TEST(RandomDistributions, ConsecutiveDrawsUseFreshCountersAndStateRestoresThem) {
  rnd::Generator gen(ten::Device::cpu(), 11);
  const std::vector<std::uint8_t> start = gen.get_state();
  Tensor a = ten::empty({5}, {DType::float32});
  rnd::normal_(a, 0, 1, &gen);
  EXPECT_EQ(gen.offset(), 2u);  // whole counters: ceil(5 / 4)
  Tensor b = ten::empty({5}, {DType::float32});
  rnd::normal_(b, 0, 1, &gen);
  EXPECT_EQ(gen.offset(), 4u);
  EXPECT_FALSE(ten::equal(a, b));
  gen.set_state(start);
  Tensor a2 = ten::empty({5}, {DType::float32});
  rnd::normal_(a2, 0, 1, &gen);
  EXPECT_TRUE(ten::equal(a.view_as(DType::int32), a2.view_as(DType::int32)));
  // A draw at offset 2 reproduces b.
  gen.set_offset(2);
  Tensor b2 = ten::empty({5}, {DType::float32});
  rnd::normal_(b2, 0, 1, &gen);
  EXPECT_TRUE(ten::equal(b.view_as(DType::int32), b2.view_as(DType::int32)));
  // float64 takes two values per counter.
  Tensor d = ten::empty({5}, {DType::float64});
  gen.set_offset(0);
  rnd::uniform_(d, 0, 1, &gen);
  EXPECT_EQ(gen.offset(), 3u);
  EXPECT_EQ(rnd::counters_per_draw(rnd::Distribution::normal, DType::float16, 9), 3u);
  EXPECT_EQ(rnd::counters_per_draw(rnd::Distribution::randint_wide, DType::int64, 9), 5u);
}

TEST(RandomDistributions, StridedOutputGetsTheLogicalRowMajorSequence) {
  for (const DType dtype : {DType::float32, DType::float64, DType::float16, DType::bfloat16}) {
    rnd::Generator g1(ten::Device::cpu(), 21), g2(ten::Device::cpu(), 21);
    // A transposed view and a slice with a step: logical order differs from memory order.
    Tensor base = ten::zeros({6, 9}, {dtype});
    Tensor strided = base.t().slice(0, 1, 9, 2);  // [4, 6]
    ASSERT_FALSE(strided.is_contiguous());
    rnd::normal_(strided, 0, 1, &g1);
    Tensor dense = ten::empty({4, 6}, {dtype});
    rnd::normal_(dense, 0, 1, &g2);
    EXPECT_EQ(ten::count_mismatches(strided.contiguous(), dense), 0) << ten::dtype_name(dtype);
    EXPECT_EQ(g1.offset(), g2.offset());
    // Elements outside the view are untouched.
    EXPECT_EQ(base.slice(1, 0, 1).to_vector<double>(), std::vector<double>(6, 0.0));
  }
}

TEST(RandomGenerator, StateBytesAndSeeds) {
  rnd::Generator gen(ten::Device::cpu(), 0x1122334455667788ull);
  gen.set_offset(0x0102030405060708ull);
  const std::vector<std::uint8_t> s = gen.get_state();
  ASSERT_EQ(s.size(), 16u);
  EXPECT_EQ(s[0], 0x88);  // little-endian seed, then offset
  EXPECT_EQ(s[7], 0x11);
  EXPECT_EQ(s[8], 0x08);
  EXPECT_EQ(s[15], 0x01);
  rnd::Generator other(ten::Device::cpu());
  EXPECT_EQ(other.initial_seed(), rnd::kDefaultSeed);
  other.set_state(s);
  EXPECT_EQ(other.initial_seed(), 0x1122334455667788ull);
  EXPECT_EQ(other.offset(), 0x0102030405060708ull);
  const std::vector<std::uint8_t> seed_only(s.begin(), s.begin() + 8);
  other.set_state(seed_only);
  EXPECT_EQ(other.initial_seed(), 0x1122334455667788ull);
  EXPECT_EQ(other.offset(), 0u);
  try {
    other.set_state(std::vector<std::uint8_t>(5));
    FAIL();
  } catch (const cudakit::InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("got 5"), std::string::npos) << e.what();
  }
  other.manual_seed(42);
  EXPECT_EQ(other.initial_seed(), 42u);
  EXPECT_EQ(other.offset(), 0u);
  const std::uint64_t a = other.seed(), b = other.seed();
  EXPECT_NE(a, b);
  EXPECT_EQ(other.initial_seed(), b);
}

TEST(RandomGenerator, ConcurrentDrawsNeverShareCounters) {
  rnd::Generator gen(ten::Device::cpu(), 5);
  std::vector<std::thread> threads;
  std::mutex m;
  std::set<std::uint64_t> starts;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) {
        const auto s = gen.philox_state(3);
        std::lock_guard lock(m);
        starts.insert(s.offset);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(starts.size(), 8000u);
  EXPECT_EQ(gen.offset(), 24000u);
  EXPECT_EQ(*starts.rbegin(), 23997u);
}

TEST(RandomDistributions, ErrorsNameTheProblem) {
  rnd::Generator gen(ten::Device::cpu());
  Tensor ints = ten::empty({3}, {DType::int32});
  const auto message = [](const std::function<void()>& f) {
    try {
      f();
    } catch (const cudakit::InvalidArgumentError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message([&] { rnd::uniform_(ints, 0, 1, &gen); }).find("int32[3]"), std::string::npos);
  Tensor f = ten::empty({3}, {DType::float32});
  EXPECT_NE(message([&] { rnd::normal_(f, 0, -1, &gen); }).find("std >= 0"), std::string::npos);
  EXPECT_NE(message([&] { rnd::uniform_(f, 2, 1, &gen); }).find("from <= to"), std::string::npos);
  EXPECT_NE(message([&] { rnd::exponential_(f, 0, &gen); }).find("lambda"), std::string::npos);
  EXPECT_NE(message([&] { rnd::bernoulli_(f, 1.5, &gen); }).find("p <= 1"), std::string::npos);
  EXPECT_NE(message([&] { (void)rnd::randint(5, 5, {2}, {DType::int64}, &gen); }).find("low < high"),
            std::string::npos);
  EXPECT_NE(message([&] { (void)rnd::randint(0, 300, {2}, {DType::uint8}, &gen); }).find("does not fit"),
            std::string::npos);
  EXPECT_NE(message([&] { (void)rnd::randperm(4, {DType::float32}, &gen); }).find("int32 or int64"),
            std::string::npos);
  EXPECT_THROW(gen.capture_prologue(), cudakit::InvalidArgumentError);  // host generator
}

}  // namespace
