#include "cudakit/random/default_generators.hpp"

#include <memory>
#include <string>

#include "cudakit/core/capture_hook.hpp"
#include "cudakit/core/device.hpp"
#include "cudakit/core/error.hpp"

namespace cudakit::random {
namespace {

// Made once, never destroyed: references handed out stay valid during static destruction (the
// same choice as the stream pools).
struct Defaults {
  Generator cpu{tensor::Device::cpu()};
  int count = device_count();
  std::unique_ptr<std::unique_ptr<Generator>[]> cuda{new std::unique_ptr<Generator>[static_cast<std::size_t>(device_count())]};
  std::unique_ptr<std::once_flag[]> made{new std::once_flag[static_cast<std::size_t>(device_count())]};
};

Defaults& defaults() {
  static Defaults* d = new Defaults();
  return *d;
}

}  // namespace

Generator& default_cuda_generator(int device);

namespace {
// Captured graphs draw fresh numbers on every replay from the device's default generator: the
// graph layer calls this around each capture and before each replay (torch's CUDAGraph does
// the same for its default generators). See Note [Graph-safe Philox state].
class DefaultGeneratorCaptureHook final : public CaptureHook {
 public:
  void capture_begin(int device) override { default_cuda_generator(device).capture_prologue(); }
  std::uint64_t capture_end(int device, StreamRef capture_stream) override {
    return default_cuda_generator(device).capture_epilogue(capture_stream);
  }
  void capture_abort(int device) noexcept override {
    try {
      default_cuda_generator(device).capture_abort();
    } catch (...) {
      // Nothing to undo if the generator cannot even be reached.
    }
  }
  void replay(int device, std::uint64_t token, StreamRef stream) override {
    default_cuda_generator(device).replay_prologue(token, stream);
  }
};

const bool kHookRegistered = [] {
  static DefaultGeneratorCaptureHook hook;
  register_capture_hook(&hook);
  return true;
}();
}  // namespace

Generator& default_cuda_generator(int device) {
  device = cudakit::detail::resolve_device(device, "default_generator");
  Defaults& d = defaults();
  std::call_once(d.made[device], [&] {
    d.cuda[device] = std::make_unique<Generator>(tensor::Device{tensor::Device::Type::cuda, device});
    d.cuda[device]->is_default_ = true;
  });
  return *d.cuda[device];
}

Generator& default_generator(tensor::Device device) {
  return device.is_cpu() ? defaults().cpu : default_cuda_generator(device.index);
}

void manual_seed(std::uint64_t seed) { default_cuda_generator().manual_seed(seed); }

void manual_seed_all(std::uint64_t seed) {
  for (int d = 0; d < device_count(); ++d) default_cuda_generator(d).manual_seed(seed);
}

std::uint64_t seed() { return default_cuda_generator().seed(); }

void seed_all() {
  for (int d = 0; d < device_count(); ++d) default_cuda_generator(d).seed();
}

std::uint64_t initial_seed() { return default_cuda_generator().initial_seed(); }

std::vector<std::uint8_t> get_rng_state(int device) {
  return default_cuda_generator(device).get_state();
}

void set_rng_state(const std::vector<std::uint8_t>& state, int device) {
  default_cuda_generator(device).set_state(state);
}

std::vector<std::vector<std::uint8_t>> get_rng_state_all() {
  std::vector<std::vector<std::uint8_t>> states;
  for (int d = 0; d < device_count(); ++d) states.push_back(default_cuda_generator(d).get_state());
  return states;
}

void set_rng_state_all(const std::vector<std::vector<std::uint8_t>>& states) {
  if (static_cast<int>(states.size()) != device_count()) {
    throw InvalidArgumentError("set_rng_state_all",
                               "got " + std::to_string(states.size()) + " states for " +
                                   std::to_string(device_count()) + " devices");
  }
  for (int d = 0; d < device_count(); ++d) default_cuda_generator(d).set_state(states[d]);
}

}  // namespace cudakit::random
