#pragma once
// @brief RegisteredSegment: one range of the caching allocator's memory a communicator has
// registered with NCCL (CommunicatorOptions::register_allocator_segments).

#include <cstddef>

namespace cudakit::nccl {

struct RegisteredSegment {
  void* base = nullptr;
  std::size_t bytes = 0;
  friend bool operator==(const RegisteredSegment&, const RegisteredSegment&) = default;
};

}  // namespace cudakit::nccl
