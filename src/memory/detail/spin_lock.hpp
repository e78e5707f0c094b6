#pragma once
// A test-and-test-and-set lock for the allocator's per-stream shards: held for tens of
// nanoseconds and, in the intended use (one thread per stream), never contended, where a
// std::mutex costs twice as much to take and release.

#include <atomic>
#include <thread>

namespace cudakit::memory::detail {

class SpinLock {
 public:
  // The uncontended case inline, the waiting loop out of line: with the loop inside, GCC made
  // lock() a call on the allocator's fast path, and without the attribute it still does in one.
  [[gnu::always_inline]] void lock() noexcept {
    if (!locked_.exchange(true, std::memory_order_acquire)) [[likely]] return;
    lock_contended();
  }
  bool try_lock() noexcept { return !locked_.exchange(true, std::memory_order_acquire); }
  void unlock() noexcept { locked_.store(false, std::memory_order_release); }

 private:
  // Waits with exponential backoff: each look at the lock that finds it taken doubles the pauses
  // before the next (up to kMaxPauses), so that many waiters do not all reach for the line the
  // moment it is released; past that, the waiter yields its CPU (the holder may be descheduled).
  [[gnu::noinline]] void lock_contended() noexcept {
    unsigned pauses = 1;
    for (;;) {
      while (locked_.load(std::memory_order_relaxed)) {
        if (pauses > kMaxPauses) {
          std::this_thread::yield();
          continue;
        }
        for (unsigned i = 0; i < pauses; ++i) pause();
        pauses *= 2;
      }
      if (!locked_.exchange(true, std::memory_order_acquire)) return;
    }
  }
  static void pause() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();  // spin without flooding the line with reads
#endif
  }
  static constexpr unsigned kMaxPauses = 64;
  std::atomic<bool> locked_{false};
};

}  // namespace cudakit::memory::detail
