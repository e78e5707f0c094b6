#pragma once
// CommunicatorOptions: how a communicator is made and watched.

#include <chrono>
#include <cstddef>
#include <string>

namespace cudakit::nccl {

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

  // These options with zero fields replaced by the defaults (and the variables above).
  [[nodiscard]] CommunicatorOptions resolved() const;
};

}  // namespace cudakit::nccl
