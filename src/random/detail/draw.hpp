#pragma once
// A draw, as the public functions hand it to the host loop (cpu_draw.cpp) or the kernels
// (random_kernels.cu), and the dispatch from it to the distribution functors, shared by both.

#include <cmath>
#include <cstdint>

#include "cudakit/core/stream_ref.hpp"
#include "cudakit/random/detail/distributions.hpp"
#include "cudakit/random/distributions.hpp"
#include "cudakit/random/philox_state.hpp"
#include "cudakit/tensor/detail/strided_indexer.hpp"
#include "cudakit/tensor/dtype.hpp"

namespace cudakit::random::detail {

struct DrawRequest {
  Distribution distribution = Distribution::uniform;
  tensor::DType dtype = tensor::DType::float32;
  double a = 0;  // uniform: from; normal: mean; exponential: lambda; bernoulli: p
  double b = 0;  // uniform: to;   normal: std
  std::int64_t low = 0;       // randint
  std::uint64_t range = 0;    // randint: high - low
};

struct DrawTarget {
  void* data = nullptr;
  std::int64_t numel = 0;
  tensor::detail::StridedIndexer index;  // used unless contiguous
  bool contiguous = true;
};

// Calls f(distribution functor) for the request. Dtypes a distribution does not take are
// rejected before this is reached, and skipped here so that they are never instantiated.
template <class F>
void with_distribution(const DrawRequest& r, F&& f) {
  tensor::visit_dtype(r.dtype, [&]<class T>() {
    constexpr bool floating = std::is_floating_point_v<T> || tensor::detail::is_reduced_float_v<T>;
    using R = real_t<T>;
    switch (r.distribution) {
      case Distribution::uniform:
        if constexpr (floating) {
          f(Uniform<T>{static_cast<R>(r.a), static_cast<R>(r.b - r.a), static_cast<R>(r.b)});
        }
        break;
      case Distribution::normal:
        if constexpr (floating) {
          if (r.a == 0 && r.b == 1) {
            f(Normal<T, true>{R(0), R(1)});
          } else {
            f(Normal<T, false>{static_cast<R>(r.a), static_cast<R>(r.b)});
          }
        }
        break;
      case Distribution::exponential:
        if constexpr (floating) f(Exponential<T>{static_cast<R>(-std::log(2.0) / r.a)});
        break;
      case Distribution::bernoulli:
        f(Bernoulli<T>{static_cast<std::uint64_t>(std::ldexp(r.a, 32))});
        break;
      case Distribution::randint:
        if constexpr (!std::is_same_v<T, bool>) f(RandomInt<T, false>{r.low, r.range});
        break;
      case Distribution::randint_wide:
        if constexpr (!std::is_same_v<T, bool>) f(RandomInt<T, true>{r.low, r.range});
        break;
      case Distribution::randperm:
        f(PermutationKey{});
        break;
    }
  });
}

// Host loop. Splits the counters over threads for large draws; the values do not depend on it.
void cpu_draw(const DrawRequest& request, const DrawTarget& target, std::uint64_t seed,
              std::uint64_t offset);
void cuda_draw(const DrawRequest& request, const DrawTarget& target, PhiloxState state,
               StreamRef stream);
// randperm on the device: keys from `state`, stable radix sort, indices into `out` (int32 or
// int64, contiguous, n elements).
void cuda_randperm(void* out, tensor::DType dtype, std::int64_t n, PhiloxState state,
                   StreamRef stream);
// Writes {seed, offset} into a generator's device slot, in stream order.
void cuda_write_slot(std::uint64_t* slot, std::uint64_t seed, std::uint64_t offset,
                     StreamRef stream);
// Adds `increment` to the slot's offset (the last node of a captured graph that draws).
void cuda_advance_slot(std::uint64_t* slot, std::uint64_t increment, StreamRef stream);

}  // namespace cudakit::random::detail
