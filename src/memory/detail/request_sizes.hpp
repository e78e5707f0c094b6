#pragma once
// The caching allocator's size classes: torch's (small requests, segment sizes), shared by the
// policy engine's parts.

#include <cstddef>

namespace cudakit::memory::detail {

inline constexpr std::size_t kSmallRequest = 1u << 20;  // requests up to this are "small"
inline constexpr std::size_t kSmallSegment = 2u << 20;  // classic small-pool segment
inline constexpr std::size_t kMediumLimit = 10u << 20;
inline constexpr std::size_t kSegmentRound = 2u << 20;

inline std::size_t round_up(std::size_t n, std::size_t m) { return (n + m - 1) / m * m; }

// The statistics' pool of a block of `rounded` bytes: 1 small, 2 large.
inline int pool_index(std::size_t rounded) { return rounded <= kSmallRequest ? 1 : 2; }

}  // namespace cudakit::memory::detail
