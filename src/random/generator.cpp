#include "cudakit/random/generator.hpp"

#include <random>
#include <string>

#include "cudakit/core/current_stream.hpp"
#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/device_guard.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/memory/device_allocator.hpp"
#include "random/detail/draw.hpp"

namespace cudakit::random {

Generator::Generator(tensor::Device device, std::uint64_t seed) : device_(device), seed_(seed) {}

Generator::~Generator() {
  if (device_slot_ == nullptr) return;
  CUDAKIT_WARN_CUDA(cudaFree(device_slot_));
}

void Generator::manual_seed(std::uint64_t seed) {
  std::lock_guard lock(mutex_);
  seed_ = seed;
  offset_ = 0;
}

std::uint64_t Generator::seed() {
  std::random_device device;
  const std::uint64_t s = (static_cast<std::uint64_t>(device()) << 32) ^ device();
  manual_seed(s);
  return s;
}

std::uint64_t Generator::initial_seed() const {
  std::lock_guard lock(mutex_);
  return seed_;
}

std::uint64_t Generator::offset() const {
  std::lock_guard lock(mutex_);
  return offset_;
}

void Generator::set_offset(std::uint64_t offset) {
  std::lock_guard lock(mutex_);
  offset_ = offset;
}

std::vector<std::uint8_t> Generator::get_state() const {
  std::lock_guard lock(mutex_);
  std::vector<std::uint8_t> state(16);
  for (int b = 0; b < 8; ++b) {
    state[b] = static_cast<std::uint8_t>(seed_ >> (8 * b));
    state[8 + b] = static_cast<std::uint8_t>(offset_ >> (8 * b));
  }
  return state;
}

void Generator::set_state(std::span<const std::uint8_t> state) {
  if (state.size() != 16 && state.size() != 8) {
    throw InvalidArgumentError("Generator::set_state",
                               "expects 16 bytes (seed, offset) or 8 bytes (seed), got " +
                                   std::to_string(state.size()));
  }
  std::uint64_t seed = 0, offset = 0;
  for (int b = 0; b < 8; ++b) {
    seed |= static_cast<std::uint64_t>(state[b]) << (8 * b);
    if (state.size() == 16) offset |= static_cast<std::uint64_t>(state[8 + b]) << (8 * b);
  }
  std::lock_guard lock(mutex_);
  seed_ = seed;
  offset_ = offset;
}

PhiloxState Generator::philox_state(std::uint64_t counters, std::optional<StreamRef> stream) {
  std::lock_guard lock(mutex_);
  if (capturing_) {
    PhiloxState state{seed_, 0, device_slot_, intragraph_offset_};
    intragraph_offset_ += counters;
    return state;
  }
  if (stream && device_.is_cuda()) {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    CUDAKIT_CHECK_CUDA(cudaStreamIsCapturing(stream->handle(), &status));
    if (status != cudaStreamCaptureStatusNone) {
      throw StateError("Generator::philox_state",
                       "a random draw is being captured into a CUDA graph, but the generator of " +
                           device_.str() + " is not capturing (call capture_prologue() first, "
                           "or capture through cudakit's Graph): its replays would repeat the "
                           "same numbers");
    }
  }
  PhiloxState state{seed_, offset_, nullptr, 0};
  offset_ += counters;
  return state;
}

void Generator::capture_prologue() {
  if (!device_.is_cuda()) {
    throw InvalidArgumentError("Generator::capture_prologue",
                               "graph capture needs a CUDA generator, this one is for the host");
  }
  std::lock_guard lock(mutex_);
  if (capturing_) {
    throw StateError("Generator::capture_prologue",
                     "the generator of " + device_.str() + " is already capturing");
  }
  if (device_slot_ == nullptr) {
    const StreamRef stream = current_stream(device_.index);
    // Straight from the driver, not the caching allocator: the slot lives as long as the
    // generator, and a capture must not change the allocator's statistics (graph tests compare
    // them before and after a capture).
    DeviceGuard guard(device_.index);
    CUDAKIT_CHECK_CUDA(cudaMalloc(reinterpret_cast<void**>(&device_slot_), 2 * sizeof(std::uint64_t)));
    // A defined value until the first replay writes it.
    detail::cuda_write_slot(device_slot_, seed_, offset_, stream);
    slot_seed_ = seed_;
    slot_offset_ = offset_;
  }
  capturing_ = true;
  intragraph_offset_ = 0;
}

std::uint64_t Generator::capture_epilogue(StreamRef capture_stream) {
  std::lock_guard lock(mutex_);
  if (!capturing_) {
    throw StateError("Generator::capture_epilogue",
                     "the generator of " + device_.str() + " is not capturing");
  }
  capturing_ = false;
  // The graph's last node advances the slot by what one replay draws, so that back-to-back
  // replays need no host work. See Note [Graph-safe Philox state].
  if (intragraph_offset_ > 0) detail::cuda_advance_slot(device_slot_, intragraph_offset_, capture_stream);
  return intragraph_offset_;
}

void Generator::capture_abort() noexcept {
  std::lock_guard lock(mutex_);
  capturing_ = false;
  intragraph_offset_ = 0;
}

namespace {
// A generator's part in the graphs it is registered with (Generator::capture_state).
class GeneratorCaptureState final : public CaptureHook {
 public:
  explicit GeneratorCaptureState(Generator& generator) : generator_(generator) {}
  void capture_begin(int device) override {
    if (generator_.device().index != device) {
      throw InvalidArgumentError("Graph::register_generator_state",
                                 cudakit::detail::concat("the generator is for ", generator_.device().str(),
                                                " but the graph captures on cuda:", device));
    }
    generator_.capture_prologue();
  }
  std::uint64_t capture_end(int, StreamRef capture_stream) override {
    return generator_.capture_epilogue(capture_stream);
  }
  void capture_abort(int) noexcept override { generator_.capture_abort(); }
  void replay(int, std::uint64_t token, StreamRef stream) override { generator_.replay_prologue(token, stream); }

 private:
  Generator& generator_;
};
}  // namespace

CaptureHook* Generator::capture_state() {
  if (!device_.is_cuda()) {
    throw InvalidArgumentError("Generator::capture_state",
                               "a CUDA graph can carry only a CUDA generator's state, this one is for the host");
  }
  if (is_default_) return nullptr;
  std::lock_guard lock(mutex_);
  if (!capture_state_) capture_state_ = std::make_unique<GeneratorCaptureState>(*this);
  return capture_state_.get();
}

void Generator::replay_prologue(std::uint64_t wholegraph_increment, StreamRef stream) {
  std::lock_guard lock(mutex_);
  if (device_slot_ == nullptr) {
    throw StateError("Generator::replay_prologue",
                     "the generator of " + device_.str() + " never captured a graph");
  }
  if (capturing_) {
    throw StateError("Generator::replay_prologue", "cannot replay while capturing");
  }
  // Only when the host state moved on (seeded, set, or eager draws) since the slot last matched.
  if (slot_seed_ != seed_ || slot_offset_ != offset_) {
    detail::cuda_write_slot(device_slot_, seed_, offset_, stream);
    slot_seed_ = seed_;
    slot_offset_ = offset_;
  }
  offset_ += wholegraph_increment;
  slot_offset_ += wholegraph_increment;  // what the replay's last node does on the device
}

bool Generator::is_capturing() const {
  std::lock_guard lock(mutex_);
  return capturing_;
}

}  // namespace cudakit::random
