#include "cudakit/random/distributions.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "cudakit/core/error.hpp"
#include "cudakit/random/default_generators.hpp"
#include "random/detail/draw.hpp"
#include "cudakit/tensor/detail/layout.hpp"

namespace cudakit::random {
namespace {

const char* distribution_name(Distribution d) {
  switch (d) {
    case Distribution::uniform: return "uniform";
    case Distribution::normal: return "normal";
    case Distribution::exponential: return "exponential";
    case Distribution::bernoulli: return "bernoulli";
    case Distribution::randint: return "randint";
    case Distribution::randint_wide: return "randint";
    case Distribution::randperm: return "randperm";
  }
  return "?";
}

Generator& pick_generator(Generator* generator, tensor::Device device, const char* api) {
  if (generator == nullptr) return default_generator(device);
  if (generator->device() != device) {
    throw InvalidArgumentError(api, "a generator of " + generator->device().str() +
                                        " cannot fill a tensor on " + device.str());
  }
  return *generator;
}

std::string number(double v) {
  std::string s = std::to_string(v);
  return s;
}

// Fills `t` with the draw `request` from `generator`.
Tensor& draw(Tensor& t, detail::DrawRequest request, Generator* generator, OptionalStream stream,
             const char* api) {
  t.check_defined(api);
  request.dtype = t.dtype();
  const std::int64_t n = t.numel();
  std::uint64_t counters = 0;
  try {
    counters = counters_per_draw(request.distribution, t.dtype(), n);
  } catch (const InvalidArgumentError&) {
    throw InvalidArgumentError(api, "does not take a " + t.description());
  }
  const tensor::Device device = t.device();
  Generator& gen = pick_generator(generator, device, api);
  detail::DrawTarget target;
  target.data = t.data_ptr();
  target.numel = n;
  target.contiguous = t.is_contiguous();
  if (!target.contiguous) target.index = tensor::detail::make_indexer(t);
  if (device.is_cpu()) {
    const PhiloxState state = gen.philox_state(counters);
    detail::cpu_draw(request, target, state.seed, state.offset);
  } else {
    const StreamRef s = t.stream_or_current(stream);
    detail::cuda_draw(request, target, gen.philox_state(counters, s), s);
  }
  return t;
}

void check_finite(double v, const char* what, const char* api) {
  if (!std::isfinite(v)) throw InvalidArgumentError(api, std::string(what) + " must be finite, got " + number(v));
}

}  // namespace

std::uint64_t counters_per_draw(Distribution distribution, tensor::DType dtype, std::int64_t numel) {
  std::uint64_t per_call = 0;
  detail::DrawRequest request;
  request.distribution = distribution;
  request.dtype = dtype;
  request.a = 1;
  detail::with_distribution(request, [&](auto dist) { per_call = decltype(dist)::kPerCall; });
  if (per_call == 0) {
    throw InvalidArgumentError("counters_per_draw",
                               std::string(distribution_name(distribution)) + " does not take " +
                                   std::string(tensor::dtype_name(dtype)));
  }
  return (static_cast<std::uint64_t>(numel) + per_call - 1) / per_call;
}

Tensor& uniform_(Tensor& t, double from, double to, Generator* generator, OptionalStream stream) {
  check_finite(from, "from", "uniform_");
  check_finite(to, "to", "uniform_");
  if (!(from <= to)) {
    throw InvalidArgumentError("uniform_", "expects from <= to, got from " + number(from) +
                                               ", to " + number(to));
  }
  if (t.defined() && tensor::is_complex(t.dtype())) {  // both parts, as torch
    Tensor parts = t.view_as_real();
    uniform_(parts, from, to, generator, stream);
    return t;
  }
  detail::DrawRequest r;
  r.distribution = Distribution::uniform;
  r.a = from;
  r.b = to;
  return draw(t, r, generator, stream, "uniform_");
}

Tensor& normal_(Tensor& t, double mean, double std, Generator* generator, OptionalStream stream) {
  check_finite(mean, "mean", "normal_");
  check_finite(std, "std", "normal_");
  if (std < 0) throw InvalidArgumentError("normal_", "expects std >= 0, got " + number(std));
  if (t.defined() && tensor::is_complex(t.dtype())) {
    // torch draws both parts from normal(mean, std / sqrt(2)): |z - mean|^2 then has mean std^2.
    Tensor parts = t.view_as_real();
    normal_(parts, mean, std / std::sqrt(2.0), generator, stream);
    return t;
  }
  detail::DrawRequest r;
  r.distribution = Distribution::normal;
  r.a = mean;
  r.b = std;
  return draw(t, r, generator, stream, "normal_");
}

Tensor& exponential_(Tensor& t, double lambda, Generator* generator, OptionalStream stream) {
  if (!(lambda > 0) || !std::isfinite(lambda)) {
    throw InvalidArgumentError("exponential_", "expects a finite lambda > 0, got " + number(lambda));
  }
  detail::DrawRequest r;
  r.distribution = Distribution::exponential;
  r.a = lambda;
  return draw(t, r, generator, stream, "exponential_");
}

Tensor& bernoulli_(Tensor& t, double p, Generator* generator, OptionalStream stream) {
  if (!(p >= 0 && p <= 1)) {
    throw InvalidArgumentError("bernoulli_", "expects 0 <= p <= 1, got " + number(p));
  }
  detail::DrawRequest r;
  r.distribution = Distribution::bernoulli;
  r.a = p;
  return draw(t, r, generator, stream, "bernoulli_");
}

Tensor& random_(Tensor& t, std::int64_t low, std::int64_t high, Generator* generator,
                OptionalStream stream) {
  t.check_defined("random_");
  if (high <= low) {
    throw InvalidArgumentError("random_", "expects low < high, got [" + std::to_string(low) +
                                              ", " + std::to_string(high) + ")");
  }
  // [low, high) must fit the integer dtype (int64 and uint64 take every int64 pair).
  bool fits = true;
  if (tensor::is_integral(t.dtype()) && t.dtype() != tensor::DType::bool_) {
    tensor::visit_dtype(t.dtype(), [&]<class T>() {
      if constexpr (sizeof(T) < sizeof(std::int64_t)) {
        fits = low >= static_cast<std::int64_t>(std::numeric_limits<T>::min()) &&
               high - 1 <= static_cast<std::int64_t>(std::numeric_limits<T>::max());
      } else if constexpr (std::is_unsigned_v<T>) {
        fits = low >= 0;
      }
    });
  }
  if (!fits) {
    throw InvalidArgumentError("random_", "[" + std::to_string(low) + ", " +
                                              std::to_string(high) + ") does not fit " +
                                              t.description());
  }
  detail::DrawRequest r;
  r.low = low;
  r.range = static_cast<std::uint64_t>(high) - static_cast<std::uint64_t>(low);
  r.distribution = r.range <= (1ull << 32) ? Distribution::randint : Distribution::randint_wide;
  return draw(t, r, generator, stream, "random_");
}

Tensor rand(const Shape& sizes, const TensorOptions& options, Generator* generator,
            OptionalStream stream) {
  Tensor t = tensor::empty(sizes, options, stream);
  return uniform_(t, 0.0, 1.0, generator, stream);
}

Tensor randn(const Shape& sizes, const TensorOptions& options, Generator* generator,
             OptionalStream stream) {
  Tensor t = tensor::empty(sizes, options, stream);
  return normal_(t, 0.0, 1.0, generator, stream);
}

Tensor randint(std::int64_t low, std::int64_t high, const Shape& sizes,
               const TensorOptions& options, Generator* generator, OptionalStream stream) {
  Tensor t = tensor::empty(sizes, options, stream);
  return random_(t, low, high, generator, stream);
}

Tensor randperm(std::int64_t n, const TensorOptions& options, Generator* generator,
                OptionalStream stream) {
  if (options.dtype != tensor::DType::int32 && options.dtype != tensor::DType::int64) {
    throw InvalidArgumentError("randperm", "needs int32 or int64, got " +
                                               std::string(tensor::dtype_name(options.dtype)));
  }
  if (n < 0 || n > std::numeric_limits<std::int32_t>::max()) {
    throw InvalidArgumentError("randperm", "n must lie in [0, 2^31), got " + std::to_string(n));
  }
  Tensor out = tensor::empty({n}, options, stream);
  Generator& gen = pick_generator(generator, options.device, "randperm");
  const std::uint64_t counters = counters_per_draw(Distribution::randperm, options.dtype, n);
  if (options.device.is_cuda()) {
    const StreamRef s = out.stream_or_current(stream);
    detail::cuda_randperm(out.data_ptr(), options.dtype, n, gen.philox_state(counters, s), s);
    return out;
  }
  std::vector<std::uint64_t> keys(static_cast<std::size_t>(n));
  detail::DrawRequest r;
  r.distribution = Distribution::randperm;
  const PhiloxState state = gen.philox_state(counters);
  detail::cpu_draw(r, detail::DrawTarget{keys.data(), n, {}, true}, state.seed, state.offset);
  std::vector<std::int64_t> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::int64_t a, std::int64_t b) { return keys[a] < keys[b]; });
  for (std::int64_t i = 0; i < n; ++i) {
    if (options.dtype == tensor::DType::int32) out.data<std::int32_t>()[i] = static_cast<std::int32_t>(order[i]);
    else out.data<std::int64_t>()[i] = order[i];
  }
  return out;
}

}  // namespace cudakit::random
