#pragma once
// @brief The default generators — one for the host and one per CUDA device, made on first use and
// living until exit — and the torch.cuda functions that act on them (manual_seed,
// manual_seed_all, seed, seed_all, initial_seed, get_rng_state(_all), set_rng_state(_all)).

#include <cstdint>
#include <vector>

#include "cudakit/random/generator.hpp"

namespace cudakit::random {

// The default generator of `device` (cuda index -1: the current device).
// @throws CudaError / InvalidArgumentError for a CUDA device that does not exist.
[[nodiscard]] Generator& default_generator(tensor::Device device);
// The current CUDA device's default generator.
[[nodiscard]] Generator& default_cuda_generator(int device = -1);

// torch.cuda.manual_seed: seeds the current device's generator.
void manual_seed(std::uint64_t seed);
// Seeds every CUDA device's generator (none where there is no GPU).
void manual_seed_all(std::uint64_t seed);
// Non-deterministic seeds: the current device's generator, resp. every device's (one seed each).
std::uint64_t seed();
void seed_all();
// The current device's initial seed.
[[nodiscard]] std::uint64_t initial_seed();
[[nodiscard]] std::vector<std::uint8_t> get_rng_state(int device = -1);
void set_rng_state(const std::vector<std::uint8_t>& state, int device = -1);
// One state per CUDA device, in device order.
[[nodiscard]] std::vector<std::vector<std::uint8_t>> get_rng_state_all();
// @throws InvalidArgumentError when the count differs from device_count().
void set_rng_state_all(const std::vector<std::vector<std::uint8_t>>& states);

}  // namespace cudakit::random
