#pragma once
// @brief PoolId: which memory pool of a device allocator (torch's MempoolId_t).

#include <compare>
#include <cstdint>

namespace cudakit::memory {

// {0, 0} is the default pool; graph pools and user pools get unique ids from
// CachingAllocator::new_pool_id().
struct PoolId {
  std::uint64_t first = 0;  // 0 for ids from new_pool_id()
  std::uint64_t second = 0;  // a process-wide counter for ids from new_pool_id()
  // Ids compare member by member (first, then second); equal ids name the same pool.
  friend auto operator<=>(const PoolId&, const PoolId&) = default;
  // @return whether this is the default pool's id, {0, 0}.
  [[nodiscard]] bool is_default() const noexcept { return first == 0 && second == 0; }
};

}  // namespace cudakit::memory
