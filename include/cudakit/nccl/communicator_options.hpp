#pragma once
// @brief CommunicatorOptions: how a communicator is made and watched.

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>

namespace cudakit::nccl {

// How a communicator is made and watched. Zero fields mean "the default": resolved() fills them
// in, from the CUDAKIT_NCCL_* variables where one is set. Every way of making a Communicator
// resolves the options it is given.
struct CommunicatorOptions {
  // How long initialization, and each operation from its enqueue, may take before the watchdog
  // aborts the communicator (See Note [Never a silent hang] in communicator.hpp). Default 10
  // minutes, as torch's; CUDAKIT_NCCL_TIMEOUT_MS overrides the default.
  std::chrono::milliseconds timeout{0};
  // How often the watchdog looks at the operations in flight and NCCL's asynchronous error.
  std::chrono::milliseconds poll_interval{50};
  // How many operations the flight recorder keeps (CUDAKIT_NCCL_FLIGHT_RECORDS).
  std::size_t flight_records = 0;
  // NCCL's commName (shows in NCCL's own logs); also names the communicator's keys in the store.
  std::string name = "default";
  // Whether the communicator's resources are shared with the communicators split from it
  // (ncclConfig_t.splitShare).
  bool split_share = false;
  // Whether the communicator registers every segment of its device's caching allocator with
  // NCCL (ncclCommRegister), existing ones at creation, new ones as they are mapped, each
  // deregistered before the allocator returns it (torch's
  // TORCH_NCCL_USE_TENSOR_REGISTER_ALLOCATOR_HOOK; See Note [Registering the allocator's
  // segments] in src/nccl/detail/segment_registrations.hpp). Unset: CUDAKIT_NCCL_REGISTER_ALLOCATOR
  // (0 or 1), else off: it pays only where NCCL has zero-copy paths for registered buffers.
  std::optional<bool> register_allocator_segments;

  // These options with zero fields replaced by the defaults (and the variables above): timeout
  // 10 minutes or CUDAKIT_NCCL_TIMEOUT_MS, poll_interval 50 ms, flight_records 2000 or
  // CUDAKIT_NCCL_FLIGHT_RECORDS, an empty name "default", register_allocator_segments
  // CUDAKIT_NCCL_REGISTER_ALLOCATOR or off.
  // @return a copy with every field set
  // @throws InvalidArgumentError naming the variable and its value when one of the variables is
  //   set but not a positive integer (or, for CUDAKIT_NCCL_REGISTER_ALLOCATOR, neither 0 nor 1).
  [[nodiscard]] CommunicatorOptions resolved() const;
};

}  // namespace cudakit::nccl
