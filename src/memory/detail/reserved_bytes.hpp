#pragma once
// ReservedBytes: the bytes obtained from the driver, all pools and streams, changed only when
// memory is obtained from or returned to the driver (See Note [Device-wide peaks] in
// device_ledger.hpp).

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace cudakit::memory::detail {

// Raises `peak` to `value` if that is higher.
inline void raise_peak(std::atomic<std::int64_t>& peak, std::int64_t value) {
  std::int64_t seen = peak.load(std::memory_order_relaxed);
  while (value > seen && !peak.compare_exchange_weak(seen, value, std::memory_order_relaxed)) {
  }
}

// Exact and lock-free: what may_reserve() reads, and the peak stats() reports without the ledger.
class [[gnu::visibility("hidden")]] ReservedBytes {
 public:
  [[nodiscard]] std::size_t total() const noexcept { return total_.load(); }
  void add(std::size_t bytes) noexcept {
    raise_peak(peak_, static_cast<std::int64_t>(total_.fetch_add(bytes) + bytes));
  }
  void remove(std::size_t bytes) noexcept { total_.fetch_sub(bytes); }
  // The device's peak, given `summed`, the sum of the shards' peaks.
  [[nodiscard]] std::int64_t bound_peak(std::int64_t summed) const noexcept {
    return std::min(summed, peak_.load());
  }
  void reset_peak() noexcept { peak_ = static_cast<std::int64_t>(total_.load()); }

 private:
  std::atomic<std::size_t> total_{0};
  std::atomic<std::int64_t> peak_{0};
};

}  // namespace cudakit::memory::detail
