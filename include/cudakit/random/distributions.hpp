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

// Uniform in [from, to) (floating dtypes; complex tensors get both parts drawn so).
// Stream-ordered on `stream` for a CUDA tensor (see above); returns before the draw completes.
// @param t the tensor filled in place (any strides)
// @param from the lower bound, finite
// @param to the upper bound, finite, at least `from`
// @param generator the generator, of t's device (null: that device's default generator)
// @param stream the draw's stream, on t's device (default: its current stream)
// @return t
// @throws InvalidArgumentError for bounds that are not finite or from > to, a dtype the
//   distribution does not take, a generator of another device or a stream of another device.
// @throws StateError for an undefined tensor, or a draw on a capturing stream from a generator
//   the capture does not carry.
Tensor& uniform_(Tensor& t, double from = 0.0, double to = 1.0, Generator* generator = nullptr,
                 OptionalStream stream = {});
// Normal with `mean` and standard deviation `std` >= 0 (floating dtypes; complex tensors draw
// both parts with std / sqrt(2), as torch). Stream-ordered on `stream` for a CUDA tensor; returns
// before the draw completes.
// @param t the tensor filled in place (any strides)
// @param mean the mean, finite
// @param std the standard deviation, finite, at least 0
// @param generator the generator, of t's device (null: that device's default generator)
// @param stream the draw's stream, on t's device (default: its current stream)
// @return t
// @throws InvalidArgumentError for a parameter that is not finite or std < 0, a dtype the
//   distribution does not take, a generator or stream of another device.
// @throws StateError for an undefined tensor, or a draw on a capturing stream from a generator
//   the capture does not carry.
Tensor& normal_(Tensor& t, double mean = 0.0, double std = 1.0, Generator* generator = nullptr,
                OptionalStream stream = {});
// Exponential with rate `lambda` > 0 (floating dtypes). Stream-ordered on `stream` for a CUDA
// tensor; returns before the draw completes.
// @param t the tensor filled in place (any strides)
// @param lambda the rate, finite and > 0 (the mean is 1 / lambda)
// @param generator the generator, of t's device (null: that device's default generator)
// @param stream the draw's stream, on t's device (default: its current stream)
// @return t
// @throws InvalidArgumentError for a bad lambda, a dtype the distribution does not take, a
//   generator or stream of another device.
// @throws StateError for an undefined tensor, or a draw on a capturing stream from a generator
//   the capture does not carry.
Tensor& exponential_(Tensor& t, double lambda = 1.0, Generator* generator = nullptr,
                     OptionalStream stream = {});
// 1 with probability p in [0, 1], else 0 (any dtype). Stream-ordered on `stream` for a CUDA
// tensor; returns before the draw completes.
// @param t the tensor filled in place (any strides)
// @param p the probability of a 1
// @param generator the generator, of t's device (null: that device's default generator)
// @param stream the draw's stream, on t's device (default: its current stream)
// @return t
// @throws InvalidArgumentError for p outside [0, 1], a dtype the distribution does not take, a
//   generator or stream of another device.
// @throws StateError for an undefined tensor, or a draw on a capturing stream from a generator
//   the capture does not carry.
Tensor& bernoulli_(Tensor& t, double p = 0.5, Generator* generator = nullptr,
                   OptionalStream stream = {});
// Integers uniform in [low, high) (integer and floating dtypes; high > low). Ranges up to 2^32
// take one Philox word per value, larger ones two. Stream-ordered on `stream` for a CUDA tensor;
// returns before the draw completes.
// @param t the tensor filled in place (any strides)
// @param low the smallest value drawn
// @param high one past the largest value drawn; [low, high) must fit t's integer dtype
// @param generator the generator, of t's device (null: that device's default generator)
// @param stream the draw's stream, on t's device (default: its current stream)
// @return t
// @throws InvalidArgumentError for high <= low, a range that does not fit the dtype, a dtype the
//   distribution does not take, a generator or stream of another device.
// @throws StateError for an undefined tensor, or a draw on a capturing stream from a generator
//   the capture does not carry.
Tensor& random_(Tensor& t, std::int64_t low, std::int64_t high, Generator* generator = nullptr,
                OptionalStream stream = {});

// A new tensor uniform in [0, 1) (floating dtypes; float32 unless the options say otherwise).
// Allocated and drawn on `stream` for a CUDA device; returns before the draw completes.
// @param sizes the shape
// @param options dtype, device and pinning of the new tensor
// @param generator the generator, of options.device (null: that device's default generator)
// @param stream the allocation's and the draw's stream (default: the device's current stream)
// @return the new contiguous tensor
// @throws InvalidArgumentError as tensor::empty() and uniform_().
// @throws OutOfMemoryError when the tensor cannot be allocated.
[[nodiscard]] Tensor rand(const Shape& sizes, const TensorOptions& options = {},
                          Generator* generator = nullptr, OptionalStream stream = {});
// A new tensor of standard normal values (floating dtypes), by the Box-Muller transform.
// Allocated and drawn on `stream` for a CUDA device; returns before the draw completes.
// @param sizes the shape
// @param options dtype, device and pinning of the new tensor
// @param generator the generator, of options.device (null: that device's default generator)
// @param stream the allocation's and the draw's stream (default: the device's current stream)
// @return the new contiguous tensor
// @throws InvalidArgumentError as tensor::empty() and normal_().
// @throws OutOfMemoryError when the tensor cannot be allocated.
[[nodiscard]] Tensor randn(const Shape& sizes, const TensorOptions& options = {},
                           Generator* generator = nullptr, OptionalStream stream = {});
// Integers uniform in [low, high); int64 unless the options say otherwise. Allocated and drawn
// on `stream` for a CUDA device; returns before the draw completes.
// @param low the smallest value drawn
// @param high one past the largest value drawn (> low)
// @param sizes the shape
// @param options dtype, device and pinning of the new tensor
// @param generator the generator, of options.device (null: that device's default generator)
// @param stream the allocation's and the draw's stream (default: the device's current stream)
// @return the new contiguous tensor
// @throws InvalidArgumentError as tensor::empty() and random_().
// @throws OutOfMemoryError when the tensor cannot be allocated.
[[nodiscard]] Tensor randint(std::int64_t low, std::int64_t high, const Shape& sizes,
                             const TensorOptions& options = {tensor::DType::int64},
                             Generator* generator = nullptr, OptionalStream stream = {});
// A random permutation of 0..n-1 (int32 or int64): element i's place is the rank of a 64-bit
// Philox key (ties by index), sorted by a stable radix sort on the GPU and std::stable_sort on
// the host — the same permutation on both. On a CUDA device it is queued on `stream` and the
// call returns before it completes; on the host it is done when the call returns.
// @param n the number of elements, in [0, 2^31)
// @param options dtype (int32 or int64), device and pinning of the new tensor
// @param generator the generator, of options.device (null: that device's default generator)
// @param stream the allocation's and the sort's stream (default: the device's current stream)
// @return the new 1-D tensor of n elements
// @throws InvalidArgumentError for another dtype, n out of range, a generator or stream of
//   another device.
// @throws StateError for a draw on a capturing stream from a generator the capture does not
//   carry.
// @throws OutOfMemoryError when the tensor cannot be allocated.
[[nodiscard]] Tensor randperm(std::int64_t n,
                              const TensorOptions& options = {tensor::DType::int64},
                              Generator* generator = nullptr, OptionalStream stream = {});

// The distributions the draw kernels implement; each fixes how many values one Philox counter
// (four 32-bit words) yields (See Note [Counter layout]).
enum class Distribution : std::uint8_t {
  uniform,  // uniform_ and rand
  normal,  // normal_ and randn (Box-Muller)
  exponential,  // exponential_
  bernoulli,  // bernoulli_
  randint,       // ranges up to 2^32: one word per value
  randint_wide,  // larger ranges: two words per value
  randperm,      // the sort keys: two words per element
};

// The Philox counters a draw of `numel` elements of `dtype` from `distribution` uses: the
// generator's offset advances by this much (See Note [Counter layout]).
// @param distribution the distribution drawn
// @param dtype the tensor's dtype (it decides the words per value for some distributions)
// @param numel the number of elements drawn
// @return the number of Philox counters the draw reserves (ceil(numel / values per counter))
// @throws InvalidArgumentError when `distribution` does not take `dtype`.
[[nodiscard]] std::uint64_t counters_per_draw(Distribution distribution, tensor::DType dtype,
                                              std::int64_t numel);

}  // namespace cudakit::random
