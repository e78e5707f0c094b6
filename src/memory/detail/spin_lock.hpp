#pragma once
// A test-and-test-and-set lock for the allocator's per-stream shards: held for tens of
// nanoseconds and, in the intended use (one thread per stream), never contended, where a
// std::mutex costs twice as much to take and release.

#include <atomic>
#include <thread>

namespace cudakit::memory::detail {

class SpinLock {
 public:
  void lock() noexcept {
    for (;;) {
      if (!locked_.exchange(true, std::memory_order_acquire)) return;
      int spins = 0;
      while (locked_.load(std::memory_order_relaxed)) {
        if (++spins > 64) std::this_thread::yield();
      }
    }
  }
  bool try_lock() noexcept { return !locked_.exchange(true, std::memory_order_acquire); }
  void unlock() noexcept { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

}  // namespace cudakit::memory::detail
