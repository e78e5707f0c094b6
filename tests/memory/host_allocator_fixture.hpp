#pragma once
// The caching allocator on simulated device memory (HostSegmentProvider) with host stream
// events: the fixture of the allocator's host tests.

#include <cstddef>
#include <memory>

#include "cudakit/memory/allocator_config.hpp"
#include "cudakit/memory/caching_allocator.hpp"
#include "cudakit/memory/host_segment_provider.hpp"

namespace cudakit::memory::testing {

inline constexpr std::size_t MiB = 1u << 20;
inline constexpr StreamKey kStreamA = 0x1000;
inline constexpr StreamKey kStreamB = 0x2000;

struct Fixture {
  explicit Fixture(AllocatorConfig config = {}, std::size_t capacity = 8ull << 30, bool auto_events = true)
      : provider(std::make_shared<HostSegmentProvider>(capacity)),
        events(std::make_shared<HostStreamEvents>(auto_events)),
        allocator(0, provider, events, config) {}
  std::shared_ptr<HostSegmentProvider> provider;
  std::shared_ptr<HostStreamEvents> events;
  CachingAllocator allocator;
};

}  // namespace cudakit::memory::testing
