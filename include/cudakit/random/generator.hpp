#pragma once
// @brief Generator: a Philox4x32-10 stream — a seed and an offset counted in Philox counters — for
// one device (torch.Generator / torch's CUDA generator). See Note [Counter layout] and
// Note [Graph-safe Philox state].
//
// Thread-safe: every member may be called concurrently; each draw reserves its counters under
// the generator's lock, so concurrent draws never overlap.

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "cudakit/core/capture_hook.hpp"
#include "cudakit/core/stream_ref.hpp"
#include "cudakit/random/philox_state.hpp"
#include "cudakit/tensor/device.hpp"

namespace cudakit::random {

// torch's default seed (default_rng_seed_val), so that an unseeded program starts the same way.
inline constexpr std::uint64_t kDefaultSeed = 67280421310721ull;

class Generator;
// Declared here for the friendship below; documented in default_generators.hpp.
Generator& default_cuda_generator(int device);

// A Philox4x32-10 random number generator for one device (torch.Generator): the draws of
// distributions.hpp reserve counters from it. Thread-safe (see above). Not copyable or movable:
// graphs and kernels refer to it by address.
class Generator {
 public:
  // A generator at (seed, offset 0). Allocates nothing on the device (the slot for graph
  // captures is made by the first capture_prologue()).
  // @param device where the draws it serves run (the host, or one CUDA device).
  // @param seed the Philox key; the offset starts at 0.
  explicit Generator(tensor::Device device = tensor::Device::cpu(),
                     std::uint64_t seed = kDefaultSeed);
  // Frees the device slot, if a capture made one (cudaFree, which waits for the device). The
  // generator must outlive the draws queued from it only when they were captured into a graph.
  ~Generator();
  // Not copyable: two copies would hand out the same counters.
  Generator(const Generator&) = delete;
  // Not copyable.
  Generator& operator=(const Generator&) = delete;

  // The device whose draws this generator serves.
  // @return the host or a CUDA device
  [[nodiscard]] tensor::Device device() const noexcept { return device_; }

  // Sets the seed and restarts the sequence (offset 0). Draws already queued keep the counters
  // they reserved: only later draws see the new seed.
  // @param seed the new Philox key
  void manual_seed(std::uint64_t seed);
  // Seeds from a non-deterministic source (std::random_device) and returns the seed.
  // @return the new seed (initial_seed() from now on)
  std::uint64_t seed();
  // The seed last set.
  // @return the seed (kDefaultSeed unless seeded)
  [[nodiscard]] std::uint64_t initial_seed() const;
  // Where the next draw starts, in Philox counters.
  // @return the offset
  [[nodiscard]] std::uint64_t offset() const;
  // Moves the next draw's start (torch's Generator.set_offset).
  // @param offset the first counter of the next draw
  void set_offset(std::uint64_t offset);

  // 16 bytes: the seed, then the offset, each a little-endian uint64 (torch's CUDA layout).
  // @return the state, for set_state()
  [[nodiscard]] std::vector<std::uint8_t> get_state() const;
  // Restores get_state()'s 16 bytes, or takes 8 bytes as a seed alone (offset 0).
  // @param state 16 bytes (seed, offset) or 8 bytes (seed), little-endian
  // @throws InvalidArgumentError for any other size (naming it).
  void set_state(std::span<const std::uint8_t> state);

  // Reserves `counters` Philox counters for one draw and says where they start. Eager: the state
  // holds (seed, offset) and the offset advances now. While capturing (capture_prologue), it
  // refers to the device slot instead. `stream`, when given, is checked: a draw queued on a
  // capturing stream of a generator that is not capturing is refused (its replays would repeat
  // the same numbers). Draw functions call it; call it yourself only for a kernel of your own.
  // @param counters the Philox counters the draw uses (counters_per_draw())
  // @param stream the stream the draw will be queued on, to be checked; none: not checked
  // @return the state to pass to the kernel
  // @throws StateError for a capturing `stream` while the generator is not capturing.
  // @throws CudaError when the stream's capture status cannot be read.
  [[nodiscard]] PhiloxState philox_state(std::uint64_t counters,
                                         std::optional<StreamRef> stream = std::nullopt);

  // --- CUDA graph support (the Graph class calls these; See Note [Graph-safe Philox state]) ---
  // Call before a capture that draws from this generator. The first call allocates the 16-byte
  // device slot (cudaMalloc) and initializes it on the current stream of the generator's device.
  // @throws StateError if already capturing.
  // @throws InvalidArgumentError for a host generator.
  // @throws CudaError when the slot cannot be allocated or written.
  void capture_prologue();
  // Call while `capture_stream` is still capturing, just before cudaStreamEndCapture: appends
  // the node that advances the device slot by one replay's draws; returns that count.
  // @param capture_stream the capturing stream; the node is captured on it (nothing runs now)
  // @return the counters one replay draws (0: nothing drawn, no node appended)
  // @throws StateError when the generator is not capturing.
  std::uint64_t capture_epilogue(StreamRef capture_stream);
  // The capture failed or was abandoned: stop capturing, queue nothing.
  void capture_abort() noexcept;
  // Call before each replay, on the replay's stream, with capture_epilogue()'s value. Queues
  // nothing unless the host state changed since the slot last matched it (manual_seed,
  // set_state, eager draws), so a loop of replays costs no extra launch.
  // @param wholegraph_increment capture_epilogue()'s value; the offset advances by it
  // @param stream the replay's stream: the slot write, if any, is queued there, before the
  //   replay; the call returns without waiting
  // @throws StateError when the generator never captured, or is capturing now.
  // @throws CudaError when the slot write cannot be launched.
  void replay_prologue(std::uint64_t wholegraph_increment, StreamRef stream);
  // Whether a capture that draws from this generator is in progress.
  // @return true between capture_prologue() and capture_epilogue() or capture_abort()
  [[nodiscard]] bool is_capturing() const;
  // This generator's state as a graph carries it (Graph::register_generator_state, torch's
  // CUDAGraph.register_generator_state): the prologue and epilogue above, called by the graph
  // around its captures and before each replay, so that a replay draws fresh numbers. nullptr
  // for a device's default generator, which every capture on its device carries already.
  // @return the hook, owned by the generator (valid as long as it), or nullptr (see above)
  // @throws InvalidArgumentError for a host generator.
  [[nodiscard]] CaptureHook* capture_state();

 private:
  tensor::Device device_;
  mutable std::mutex mutex_;
  std::uint64_t seed_;
  std::uint64_t offset_ = 0;
  bool capturing_ = false;
  std::uint64_t intragraph_offset_ = 0;
  std::uint64_t* device_slot_ = nullptr;
  // What the device slot holds once the queued work has run (host mirror).
  std::uint64_t slot_seed_ = 0;
  std::uint64_t slot_offset_ = 0;  // 16 bytes on device_, made on first capture
  bool is_default_ = false;        // set by default_cuda_generator
  std::unique_ptr<CaptureHook> capture_state_;  // under mutex_, made on first request
  friend Generator& default_cuda_generator(int device);
};

}  // namespace cudakit::random
