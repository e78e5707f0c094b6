#pragma once
// @brief AsyncPoolModel: a host model of a stream-ordered pool as cudaMallocAsync keeps one (the
// device's default memory pool), for what-if replays of recorded traces. See Note [A model of
// cudaMallocAsync's pool] in src/memory/async_pool_model.cpp.

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <unordered_map>
#include <utility>

namespace cudakit::memory {

// The model of one pool. Single-threaded; addresses are numbers, and frees take effect at once
// (a replay's stream ordering is the order of the calls).
class AsyncPoolModel {
 public:
  static constexpr std::uint64_t kGranule = std::uint64_t{2} << 20;  // the mapping granularity, in bytes
  static constexpr std::uint64_t kAlignment = 512;  // every block's alignment, in bytes
  static constexpr std::uint64_t kFailed = ~std::uint64_t{0};  // allocate()'s answer on failure

  // `capacity`: the physical memory that can be mapped at all.
  // @param capacity bytes that can be mapped.
  explicit AsyncPoolModel(std::size_t capacity) : capacity_(capacity) {}

  // cudaMallocAsync: the block's address, or kFailed when even the pool's unused memory
  // released (as the driver does before failing) leaves too little.
  // @param bytes the size requested (rounded up to kAlignment).
  // @return the block's address, or kFailed.
  std::uint64_t allocate(std::size_t bytes);
  // cudaFreeAsync: the memory returns to the pool, still mapped.
  // @param address an address allocate() returned; any other is ignored.
  void free(std::uint64_t address);
  // cudaMemPoolTrimTo(pool, 0) after a synchronization (torch.cuda.empty_cache() with the
  // cudaMallocAsync backend): every granule no live block touches is unmapped.
  void trim();

  // @return mapped bytes now (the pool's reserved memory).
  [[nodiscard]] std::uint64_t reserved() const noexcept { return mapped_; }
  // @return the peak of reserved().
  [[nodiscard]] std::uint64_t peak_reserved() const noexcept { return peak_mapped_; }
  // @return bytes of live blocks now.
  [[nodiscard]] std::uint64_t allocated() const noexcept { return allocated_; }
  // @return the peak of allocated().
  [[nodiscard]] std::uint64_t peak_allocated() const noexcept { return peak_allocated_; }
  // @return the trim() calls so far, the driver's own before a failure included.
  [[nodiscard]] std::size_t trims() const noexcept { return trims_; }

 private:
  // Granules of [g0, g1) not mapped yet.
  std::uint64_t unmapped_in(std::uint64_t g0, std::uint64_t g1) const;
  void map(std::uint64_t g0, std::uint64_t g1);
  void unmap(std::uint64_t g0, std::uint64_t g1);
  void add_free(std::uint64_t addr, std::uint64_t size);
  void remove_free(std::uint64_t addr, std::uint64_t size);

  std::size_t capacity_;
  std::map<std::uint64_t, std::uint64_t> free_by_address_;            // start -> size
  std::set<std::pair<std::uint64_t, std::uint64_t>> free_by_size_;     // (size, start)
  std::unordered_map<std::uint64_t, std::uint64_t> live_;             // start -> size
  std::map<std::uint64_t, std::uint64_t> mapped_granules_;            // first -> end (exclusive)
  std::uint64_t top_ = 0;  // the end of the pool's address range in use
  std::uint64_t mapped_ = 0, peak_mapped_ = 0, allocated_ = 0, peak_allocated_ = 0;
  std::size_t trims_ = 0;
};

}  // namespace cudakit::memory
