#pragma once
// @brief Random tensors: rand/uniform_, randn/normal_, randint/random_, bernoulli_, exponential_,
// randperm — for float32, float64, float16 and bfloat16, and integer/bool dtypes where they apply.
//
// Every function takes an optional generator (default: the default generator of the tensor's
// device) and, for CUDA tensors, an optional stream (default: the current stream of the device).
// Element i of the output — i its row-major logical index, whatever the strides — depends only on
// (seed, offset, i): the host and every GPU produce the same bits (See Note [Counter layout]).
// Stream ordering: on a CUDA tensor the draw is one kernel queued on the stream, after the work
// queued there before it; the host does not wait. The generator's offset advances when the draw
// is queued, so draws on different streams never share counters. Inside a graph capture the
// draw reads the offset from the device at each replay (See Note [Graph-safe Philox state]).
// @throws InvalidArgumentError for bad parameters or dtypes, or a generator of another device;
// StateError for a draw on a capturing stream from a generator the capture does not carry.

#include <cstdint>

#include "cudakit/random/generator.hpp"
#include "cudakit/tensor/factories.hpp"
#include "cudakit/tensor/tensor.hpp"

namespace cudakit::random {

using tensor::OptionalStream;
using tensor::Shape;
using tensor::Tensor;
using tensor::TensorOptions;

// Uniform in [from, to) (floating dtypes).
Tensor& uniform_(Tensor& t, double from = 0.0, double to = 1.0, Generator* generator = nullptr,
                 OptionalStream stream = {});
// Normal with `mean` and standard deviation `std` >= 0 (floating dtypes).
Tensor& normal_(Tensor& t, double mean = 0.0, double std = 1.0, Generator* generator = nullptr,
                OptionalStream stream = {});
// Exponential with rate `lambda` > 0 (floating dtypes).
Tensor& exponential_(Tensor& t, double lambda = 1.0, Generator* generator = nullptr,
                     OptionalStream stream = {});
// 1 with probability p in [0, 1], else 0 (any dtype).
Tensor& bernoulli_(Tensor& t, double p = 0.5, Generator* generator = nullptr,
                   OptionalStream stream = {});
// Integers uniform in [low, high) (integer and floating dtypes; high > low).
Tensor& random_(Tensor& t, std::int64_t low, std::int64_t high, Generator* generator = nullptr,
                OptionalStream stream = {});

// A new tensor uniform in [0, 1) (floating dtypes; float32 unless the options say otherwise).
[[nodiscard]] Tensor rand(const Shape& sizes, const TensorOptions& options = {},
                          Generator* generator = nullptr, OptionalStream stream = {});
// A new tensor of standard normal values (floating dtypes), by the Box-Muller transform.
[[nodiscard]] Tensor randn(const Shape& sizes, const TensorOptions& options = {},
                           Generator* generator = nullptr, OptionalStream stream = {});
// Integers uniform in [low, high); int64 unless the options say otherwise.
[[nodiscard]] Tensor randint(std::int64_t low, std::int64_t high, const Shape& sizes,
                             const TensorOptions& options = {tensor::DType::int64},
                             Generator* generator = nullptr, OptionalStream stream = {});
// A random permutation of 0..n-1 (int32 or int64): element i's place is the rank of a 64-bit
// Philox key (ties by index), sorted by a stable radix sort on the GPU and std::stable_sort on
// the host — the same permutation on both.
[[nodiscard]] Tensor randperm(std::int64_t n,
                              const TensorOptions& options = {tensor::DType::int64},
                              Generator* generator = nullptr, OptionalStream stream = {});

enum class Distribution : std::uint8_t {
  uniform,
  normal,
  exponential,
  bernoulli,
  randint,       // ranges up to 2^32: one word per value
  randint_wide,  // larger ranges: two words per value
  randperm,      // the sort keys: two words per element
};

// The Philox counters a draw of `numel` elements of `dtype` from `distribution` uses: the
// generator's offset advances by this much (See Note [Counter layout]).
[[nodiscard]] std::uint64_t counters_per_draw(Distribution distribution, tensor::DType dtype,
                                              std::int64_t numel);

}  // namespace cudakit::random
