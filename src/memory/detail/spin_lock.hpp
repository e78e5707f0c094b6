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
  [[gnu::noinline]] void lock_contended() noexcept {
    for (;;) {
      int spins = 0;
      while (locked_.load(std::memory_order_relaxed)) {
        if (++spins > 64) std::this_thread::yield();
#if defined(__x86_64__) || defined(__i386__)
        else __builtin_ia32_pause();  // spin without flooding the line with reads
#endif
      }
      if (!locked_.exchange(true, std::memory_order_acquire)) return;
    }
  }
  std::atomic<bool> locked_{false};
};

}  // namespace cudakit::memory::detail
