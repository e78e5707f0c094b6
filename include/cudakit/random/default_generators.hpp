#pragma once
// @brief The default generators — one for the host and one per CUDA device, made on first use and
// living until exit — and the torch.cuda functions that act on them (manual_seed,
// manual_seed_all, seed, seed_all, initial_seed, get_rng_state(_all), set_rng_state(_all)).

#include <cstdint>
#include <vector>

#include "cudakit/random/generator.hpp"

namespace cudakit::random {

// The default generator of `device` (cuda index -1: the current device). The generators are
// made on first use, thread-safely, and never destroyed: the reference stays valid until exit.
// @param device the host (Device::cpu()) or a CUDA device
// @return the generator that draws without an explicit generator use for that device
// @throws CudaError for a CUDA device where there is none.
// @throws InvalidArgumentError for a CUDA ordinal that does not exist.
[[nodiscard]] Generator& default_generator(tensor::Device device);
// A CUDA device's default generator (torch.cuda.default_generators[device]).
// @param device a CUDA ordinal, or -1 for the calling thread's current device
// @return the generator, valid until exit
// @throws CudaError where there is no device.
// @throws InvalidArgumentError for an ordinal that does not exist.
[[nodiscard]] Generator& default_cuda_generator(int device = -1);

// torch.cuda.manual_seed: seeds the current device's generator (Generator::manual_seed: the
// offset goes back to 0; draws already queued keep their numbers).
// @param seed the new seed
// @throws CudaError where there is no device.
void manual_seed(std::uint64_t seed);
// Seeds every CUDA device's generator (none where there is no GPU).
// @param seed the seed every device's generator gets
void manual_seed_all(std::uint64_t seed);
// Non-deterministic seeds: the current device's generator, resp. every device's (one seed each).
// @return the seed the current device's generator now has
// @throws CudaError where there is no device.
std::uint64_t seed();
// Seeds every CUDA device's generator from a non-deterministic source, each with its own seed
// (torch.cuda.seed_all); nothing where there is no GPU.
void seed_all();
// The current device's initial seed.
// @return the seed last set on the current device's generator (kDefaultSeed if never seeded)
// @throws CudaError where there is no device.
[[nodiscard]] std::uint64_t initial_seed();
// A CUDA device's generator state (torch.cuda.get_rng_state): Generator::get_state's 16 bytes.
// @param device a CUDA ordinal, or -1 for the current device
// @return the seed then the offset, little-endian uint64 each
// @throws CudaError where there is no device.
// @throws InvalidArgumentError for an ordinal that does not exist.
[[nodiscard]] std::vector<std::uint8_t> get_rng_state(int device = -1);
// Restores a CUDA device's generator state (torch.cuda.set_rng_state); later draws continue from
// it, draws already queued are not affected.
// @param state get_rng_state()'s 16 bytes, or 8 bytes holding a seed alone (offset 0)
// @param device a CUDA ordinal, or -1 for the current device
// @throws InvalidArgumentError for a state of another size or an ordinal that does not exist.
// @throws CudaError where there is no device.
void set_rng_state(const std::vector<std::uint8_t>& state, int device = -1);
// One state per CUDA device, in device order.
// @return get_rng_state(d) for every device d (empty where there is no GPU)
[[nodiscard]] std::vector<std::vector<std::uint8_t>> get_rng_state_all();
// Restores every CUDA device's generator state (torch.cuda.set_rng_state_all).
// @param states one state per device, in device order, as get_rng_state_all() returns them
// @throws InvalidArgumentError when the count differs from device_count(), or a state has a bad
//   size (the devices before it are then already set).
void set_rng_state_all(const std::vector<std::vector<std::uint8_t>>& states);

}  // namespace cudakit::random
