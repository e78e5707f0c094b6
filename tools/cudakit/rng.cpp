// `cudakit rng`: prints the values a Philox draw produces, one a line, exactly (9 significant
// digits for float32 and 17 for float64 are enough to round-trip). The CPU path gives the same
// bits as the GPU, so `--device cpu` reproduces a GPU draw on a machine without one.

#include <cstdint>
#include <cstdio>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "errors.hpp"
#include "command.hpp"
#include "cudakit/core/device.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/random/distributions.hpp"
#include "cudakit/random/generator.hpp"

namespace cudakit::cli {
namespace {

// The most values one draw prints: 2^28, the size the GPU and CPU draws are checked bit-identical
// at. It bounds the memory (up to 4 GiB for float64: the tensor, then its copy as doubles) and the
// output (some 6 GB of text); --offset reaches any later part of the stream.
constexpr std::uint64_t kMaxValues = std::uint64_t{1} << 28;

struct RngOptions {
  std::uint64_t seed = random::kDefaultSeed;
  std::uint64_t offset = 0;
  std::int64_t n = 10;
  std::string dist = "uniform";
  std::string dtype = "float32";
  std::string device;  // empty: cuda where a GPU exists, else cpu (the values are the same)
};

int run_rng(const RngOptions& o) {
  const tensor::DType dtype = tensor::parse_dtype(o.dtype);
  const bool use_cuda = o.device.empty() ? is_available() : o.device == "cuda";
  if (use_cuda && !is_available()) {
    throw std::runtime_error(
        "--device cuda needs a CUDA device and this machine has none; --device cpu draws the same "
        "values");
  }
  const tensor::Device device = use_cuda ? tensor::Device::cuda() : tensor::Device::cpu();
  random::Generator gen(device, o.seed);
  gen.set_offset(o.offset);
  tensor::Tensor t = tensor::empty({o.n}, {dtype, device});
  if (o.dist == "uniform") random::uniform_(t, 0, 1, &gen);
  else if (o.dist == "normal") random::normal_(t, 0, 1, &gen);
  else random::exponential_(t, 1, &gen);
  const std::vector<double> values = t.to_vector<double>();
  const char* format = dtype == tensor::DType::float32 ? "%.9g\n" : "%.17g\n";
  for (const double v : values) std::printf(format, v);
  return 0;
}

const RegisterCommand kRng(
    "rng", "print a Philox draw (uniform, normal, exponential), one value a line",
    [](CLI::App& command) -> std::function<int()> {
      auto options = std::make_shared<RngOptions>();
      const auto any_integer = integer_in("an integer", 0, UINT64_MAX);
      command.add_option("--seed", options->seed, "generator seed")
          ->capture_default_str()
          ->transform(any_integer);
      command.add_option("--offset", options->offset, "generator offset, in Philox counters")
          ->capture_default_str()
          ->transform(any_integer);
      command.add_option("--n", options->n, "number of values")
          ->capture_default_str()
          ->transform(integer_in("a count", 1, kMaxValues));
      command.add_option("--dist", options->dist, "distribution")
          ->capture_default_str()
          ->check(one_of({"uniform", "normal", "exponential"}));
      command.add_option("--dtype", options->dtype, "element type")
          ->capture_default_str()
          ->check(one_of({"float32", "float64"}));
      command.add_option("--device", options->device,
                         "cpu or cuda (default: cuda where a GPU exists, else cpu; same values)")
          ->check(one_of({"cpu", "cuda"}));
      return [options] { return run_rng(*options); };
    });

}  // namespace
}  // namespace cudakit::cli
