#include "cudakit/memory/async_pool_model.hpp"

#include <algorithm>
#include <iterator>

namespace cudakit::memory {

// Note [A model of cudaMallocAsync's pool]
// The driver's pool allocator is not documented beyond its contract, so this model keeps to
// what the contract and its measurable behaviour say:
//  - one pool per device shared by every stream: memory a stream freed is reused by any stream
//    (the default pool allows opportunistic reuse and reuse that follows event dependencies;
//    a host replay has no timing, so reuse is always allowed);
//  - physical memory is mapped on demand in 2 MiB granules under one growing range of
//    addresses; a block takes the smallest free range that fits (then the lowest address), or
//    the end of the range, and maps the granules it touches that are not mapped yet;
//  - freed memory stays mapped in the pool: the default release threshold is 0, which releases
//    unused memory at a synchronization, and a recorded trace has no synchronizations; so the
//    model releases it (unmaps every granule no live block touches) at empty_cache() calls, as
//    torch's empty_cache does for this backend (cudaMemPoolTrimTo(pool, 0)), and when mapping
//    would pass the device's memory, before failing;
//  - sizes are rounded to 512 bytes.
// Reserved bytes are the mapped granules, as cudaMemPoolAttrReservedMemCurrent counts them.
namespace {

std::uint64_t round_up(std::uint64_t n, std::uint64_t to) { return (n + to - 1) / to * to; }

}  // namespace

void AsyncPoolModel::add_free(std::uint64_t addr, std::uint64_t size) {
  free_by_address_.emplace(addr, size);
  free_by_size_.emplace(size, addr);
}

void AsyncPoolModel::remove_free(std::uint64_t addr, std::uint64_t size) {
  free_by_address_.erase(addr);
  free_by_size_.erase({size, addr});
}

std::uint64_t AsyncPoolModel::unmapped_in(std::uint64_t g0, std::uint64_t g1) const {
  std::uint64_t missing = g1 - g0;
  auto it = mapped_granules_.upper_bound(g0);
  if (it != mapped_granules_.begin()) --it;
  for (; it != mapped_granules_.end() && it->first < g1; ++it) {
    const std::uint64_t lo = std::max(it->first, g0), hi = std::min(it->second, g1);
    if (lo < hi) missing -= hi - lo;
  }
  return missing;
}

void AsyncPoolModel::map(std::uint64_t g0, std::uint64_t g1) {
  // Merge with every range that overlaps or touches [g0, g1).
  auto it = mapped_granules_.upper_bound(g0);
  if (it != mapped_granules_.begin() && std::prev(it)->second >= g0) --it;
  while (it != mapped_granules_.end() && it->first <= g1) {
    g0 = std::min(g0, it->first);
    g1 = std::max(g1, it->second);
    it = mapped_granules_.erase(it);
  }
  mapped_granules_.emplace(g0, g1);
}

void AsyncPoolModel::unmap(std::uint64_t g0, std::uint64_t g1) {
  if (g0 >= g1) return;
  auto it = mapped_granules_.upper_bound(g0);
  if (it != mapped_granules_.begin()) --it;
  while (it != mapped_granules_.end() && it->first < g1) {
    const auto [lo, hi] = *it;
    if (hi <= g0) {
      ++it;
      continue;
    }
    it = mapped_granules_.erase(it);
    mapped_ -= (std::min(hi, g1) - std::max(lo, g0)) * kGranule;
    if (lo < g0) mapped_granules_.emplace(lo, g0);
    if (hi > g1) it = mapped_granules_.emplace(g1, hi).first;
  }
}

void AsyncPoolModel::trim() {
  ++trims_;
  for (const auto& [addr, size] : free_by_address_) {
    unmap((addr + kGranule - 1) / kGranule, (addr + size) / kGranule);
  }
  unmap((top_ + kGranule - 1) / kGranule, ~std::uint64_t{0});
}

std::uint64_t AsyncPoolModel::allocate(std::size_t bytes) {
  const std::uint64_t size = round_up(std::max<std::uint64_t>(bytes, 1), kAlignment);
  // Where it goes: the best-fitting free range, else the end of the range in use (joining a
  // free range that ends there).
  std::uint64_t addr = 0, range = 0;
  const auto fit = free_by_size_.lower_bound({size, 0});
  if (fit != free_by_size_.end()) {
    std::tie(range, addr) = *fit;
  } else if (!free_by_address_.empty() && std::prev(free_by_address_.end())->first +
                                                  std::prev(free_by_address_.end())->second == top_) {
    std::tie(addr, range) = *std::prev(free_by_address_.end());
  } else {
    addr = top_;
  }
  const std::uint64_t g0 = addr / kGranule, g1 = (addr + size + kGranule - 1) / kGranule;
  std::uint64_t needed = unmapped_in(g0, g1) * kGranule;
  if (needed > capacity_ || mapped_ > capacity_ - needed) {
    trim();
    needed = unmapped_in(g0, g1) * kGranule;
    if (needed > capacity_ || mapped_ > capacity_ - needed) return kFailed;
  }
  if (range != 0) {
    remove_free(addr, range);
    if (range > size) add_free(addr + size, range - size);
  }
  top_ = std::max(top_, addr + size);
  map(g0, g1);
  mapped_ += needed;
  peak_mapped_ = std::max(peak_mapped_, mapped_);
  live_.emplace(addr, size);
  allocated_ += size;
  peak_allocated_ = std::max(peak_allocated_, allocated_);
  return addr;
}

void AsyncPoolModel::free(std::uint64_t address) {
  const auto it = live_.find(address);
  if (it == live_.end()) return;
  std::uint64_t addr = it->first, size = it->second;
  live_.erase(it);
  allocated_ -= size;
  // Merge with the free neighbours.
  auto next = free_by_address_.lower_bound(addr);
  if (next != free_by_address_.end() && next->first == addr + size) {
    const auto [a, s] = *next;
    remove_free(a, s);
    size += s;
  }
  auto prev = free_by_address_.lower_bound(addr);
  if (prev != free_by_address_.begin()) {
    --prev;
    if (prev->first + prev->second == addr) {
      const auto [a, s] = *prev;
      remove_free(a, s);
      addr = a;
      size += s;
    }
  }
  if (addr + size == top_) {
    top_ = addr;  // the end of the range in use moves down; its granules stay mapped
  } else {
    add_free(addr, size);
  }
}

}  // namespace cudakit::memory
