#pragma once
// @brief RegisteredSegment: one range of the caching allocator's memory a communicator has
// registered with NCCL (CommunicatorOptions::register_allocator_segments).

#include <cstddef>

namespace cudakit::nccl {

// One address range registered with NCCL (ncclCommRegister), as
// Communicator::registered_segments() lists it.
struct RegisteredSegment {
  void* base = nullptr;   // first byte of the range (device memory)
  std::size_t bytes = 0;  // length of the range
  // Whether both name the same range.
  // @return true when base and bytes are equal.
  friend bool operator==(const RegisteredSegment&, const RegisteredSegment&) = default;
};

}  // namespace cudakit::nccl
