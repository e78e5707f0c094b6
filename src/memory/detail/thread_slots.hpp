#pragma once
// ThreadSlots: small numbers for the threads that allocate from a stream's slot shards, the lowest
// free one taken at a thread's first need and given back when the thread exits (See Note
// [Threads sharing a stream] in thread_shards.hpp).

#include <atomic>
#include <bit>
#include <cstdint>

namespace cudakit::memory::detail {

class [[gnu::visibility("hidden")]] ThreadSlots {
 public:
  // A stream has at most this many slot shards, whatever the number of threads.
  static constexpr int kSlots = 16;

  // The lowest free slot, now taken; -1 when every slot is taken.
  int acquire() noexcept {
    std::uint32_t taken = taken_.load(std::memory_order_relaxed);
    for (;;) {
      const std::uint32_t free = ~taken & kAll;
      if (free == 0) return -1;
      const int slot = std::countr_zero(free);
      if (taken_.compare_exchange_weak(taken, taken | (std::uint32_t{1} << slot), std::memory_order_acq_rel,
                                       std::memory_order_relaxed)) {
        return slot;
      }
    }
  }
  // Gives back a slot that acquire() returned.
  void release(int slot) noexcept { taken_.fetch_and(~(std::uint32_t{1} << slot), std::memory_order_acq_rel); }
  // The taken slots, one bit each.
  [[nodiscard]] std::uint32_t taken() const noexcept { return taken_.load(std::memory_order_acquire); }

 private:
  static_assert(kSlots <= 32);
  static constexpr std::uint32_t kAll = kSlots == 32 ? ~std::uint32_t{0} : (std::uint32_t{1} << kSlots) - 1;
  std::atomic<std::uint32_t> taken_{0};
};

// The process's slots: a thread's slot is the same for every allocator and stream.
inline ThreadSlots g_thread_slots;

// The calling thread's slot, taken from g_thread_slots at its first call and given back when the
// thread exits; -1 while every slot is taken (each later call tries again), and for calls made
// while the thread exits after its slot went back (a thread_local's destructor allocating).
class [[gnu::visibility("hidden")]] ThisThreadSlot {
 public:
  static int get() noexcept {
    int& slot = slot_of_thread();
    if (slot == kExited) return -1;
    if (slot < 0) {
      slot = g_thread_slots.acquire();
      if (slot >= 0) give_back_at_exit();
    }
    return slot;
  }

 private:
  static constexpr int kExited = -2;
  // Trivially destructible, so readable until the thread's very end.
  static int& slot_of_thread() noexcept {
    thread_local int slot = -1;
    return slot;
  }
  // Constructed at the first slot taken: its destructor runs when the thread exits.
  static void give_back_at_exit() noexcept {
    struct Giver {
      ~Giver() {
        int& slot = slot_of_thread();
        if (slot >= 0) g_thread_slots.release(slot);
        slot = kExited;
      }
    };
    thread_local Giver giver;
    (void)giver;
  }
};

}  // namespace cudakit::memory::detail
