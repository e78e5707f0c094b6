#pragma once
// @brief PhiloxState: what a kernel needs to know to draw from a Generator — passed by value into
// the kernel, and read there. See Note [Graph-safe Philox state].

#include <cstdint>

#include "cudakit/core/host_device.hpp"

namespace cudakit::random {

// Note [Graph-safe Philox state]
// An eager draw bakes (seed, offset) into the kernel's arguments. A draw captured into a CUDA
// graph cannot: every replay would repeat the captured numbers. So while a generator is capturing
// (Generator::capture_prologue), the state it hands out points at a 16-byte slot in device memory
// holding {seed, base offset}, plus the counters used by earlier draws of the same capture
// (`intragraph_offset`); the kernel reads the slot when it runs. Before each replay,
// Generator::replay_prologue writes the generator's current seed and offset into the slot (a
// one-thread kernel on the replay stream) and advances the offset by the counters the whole graph
// uses. A replay therefore draws exactly what the same calls would have drawn eagerly at that
// point, and the generator's state afterwards is the same too (torch's CUDA generator works the
// same way: philox_cuda_state, seed_extragraph, offset_extragraph).

// A draw's Philox state, as Generator::philox_state hands it out: (seed, offset) for an eager
// draw, or the device slot plus intragraph_offset for a captured one. Trivially copyable, for a
// kernel argument. See Note [Graph-safe Philox state] above.
struct PhiloxState {
  std::uint64_t seed = 0;  // the Philox key (eager draws; captured draws read the slot's)
  std::uint64_t offset = 0;  // the draw's first counter (eager)
  // Captured draws: {seed, base offset} in device memory, read when the kernel runs; null for
  // eager draws.
  const std::uint64_t* device_slot = nullptr;
  std::uint64_t intragraph_offset = 0;  // captured draws: counters of earlier draws in the graph

  // A draw's key and first counter, as unpack() resolves them.
  struct Values {
    std::uint64_t seed;  // the Philox key
    std::uint64_t offset;  // the draw's first Philox counter
  };
  // The (seed, first counter) of the draw; on the device for captured draws.
  // @return the values; for a captured draw, read from device memory (call it in the kernel)
  CUDAKIT_HD_INLINE Values unpack() const {
    if (device_slot != nullptr) return Values{device_slot[0], device_slot[1] + intragraph_offset};
    return Values{seed, offset};
  }
};

}  // namespace cudakit::random
