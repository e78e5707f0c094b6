// Threads sharing one stream (See Note [Threads sharing a stream] in
// src/memory/detail/thread_shards.hpp): exact statistics, bounded memory, slots given back at
// thread exit, record_stream, external holds, pools and empty_cache over slot shards. Names carry
// "Thread": CI runs them under ThreadSanitizer.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <bit>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

#include "cudakit/memory/caching_allocator.hpp"
#include "cudakit/memory/host_segment_provider.hpp"
#include "cudakit/memory/memory_stats.hpp"
#include "memory/detail/thread_slots.hpp"
#include "memory/host_allocator_fixture.hpp"

namespace cudakit::memory {
namespace {

using testing::Fixture;
using testing::kStreamA;
using testing::kStreamB;
using testing::MiB;

constexpr std::size_t kPage = 2 * MiB;  // HostSegmentProvider's default page

AllocatorConfig with_thread_shards(ThreadShards mode, bool expandable = true) {
  AllocatorConfig config;
  config.thread_shards = mode;
  config.expandable_segments = expandable;
  return config;
}

// Twenty threads on one stream, as alloc_bench's threads_16_one_stream row (each thread
// `free(alloc(4096 << t % 4))` in a loop) with four more threads than there are slots (they stay
// on the stream's primary shard), then all holding blocks at once at a barrier: the
// device's peaks of that round are its holdings summed, exact; after every round nothing is
// allocated or active; reserved memory stays bounded round after round (new threads take the
// slots, and their shards' caches, that the last round's threads gave back).
TEST(StreamThreadShards, MoreThreadsThanSlotsOnOneStreamKeepExactStatisticsAndBoundedMemory) {
  for (ThreadShards mode : {ThreadShards::adaptive, ThreadShards::always, ThreadShards::off}) {
    for (const bool expandable : {true, false}) {
      Fixture f(with_thread_shards(mode, expandable));
      constexpr int kThreads = detail::ThreadSlots::kSlots + 4;
      constexpr int kHeld = 8;
      constexpr int kRounds = 4;
      const auto size = [](int t, int i) { return std::size_t{4096} << ((t + i) % 4); };
      std::int64_t held_bytes = 0;
      for (int t = 0; t < kThreads; ++t) {
        for (int i = 0; i < kHeld; ++i) held_bytes += static_cast<std::int64_t>(size(t, i));
      }
      std::int64_t reserved_after_first = 0;
      for (int round = 0; round < kRounds; ++round) {
        f.allocator.reset_peak_stats();
        std::barrier all_hold(kThreads + 1);
        std::atomic<int> bad{0};
        std::vector<std::thread> threads;
        for (int t = 0; t < kThreads; ++t) {
          threads.emplace_back([&, t] {
            for (int i = 0; i < 1000; ++i) f.allocator.deallocate(f.allocator.allocate(size(t, 0), kStreamA));
            std::vector<unsigned char*> held;
            for (int i = 0; i < kHeld; ++i) {
              held.push_back(static_cast<unsigned char*>(f.allocator.allocate(size(t, i), kStreamA)));
              std::memset(held.back(), t + 1, size(t, i));
            }
            all_hold.arrive_and_wait();  // the main thread reads the statistics here
            all_hold.arrive_and_wait();
            for (int i = 0; i < kHeld; ++i) {
              for (std::size_t j = 0; j < size(t, i); j += 509) bad += held[static_cast<std::size_t>(i)][j] != t + 1;
              f.allocator.deallocate(held[static_cast<std::size_t>(i)]);
            }
          });
        }
        all_hold.arrive_and_wait();
        const MemoryStats at_barrier = f.allocator.stats();
        all_hold.arrive_and_wait();
        for (auto& th : threads) th.join();
        const MemoryStats m = f.allocator.stats();
        const auto where = ::testing::Message() << to_string(mode) << ", expandable " << expandable << ", round "
                                                << round;
        EXPECT_EQ(bad.load(), 0) << where;
        EXPECT_EQ(at_barrier.allocation[0].current, kThreads * kHeld) << where;
        EXPECT_EQ(at_barrier.allocated_bytes[0].current, held_bytes) << where;
        EXPECT_EQ(m.allocation[0].peak, kThreads * kHeld) << where;
        EXPECT_EQ(m.allocated_bytes[0].peak, held_bytes) << where;
        EXPECT_EQ(m.active_bytes[0].peak, held_bytes) << where;
        EXPECT_EQ(m.requested_bytes[0].peak, held_bytes) << where;
        EXPECT_EQ(m.allocated_bytes[0].current, 0) << where;
        EXPECT_EQ(m.allocation[0].current, 0) << where;
        EXPECT_EQ(m.active[0].current, 0) << where;
        EXPECT_EQ(m.active_bytes[0].current, 0) << where;
        EXPECT_EQ(m.num_cross_stream_reuses, 0) << where << ": one stream lends nothing across streams";
        EXPECT_EQ(m.reserved_bytes[0].current, static_cast<std::int64_t>(f.provider->in_use())) << where;
        // Each of the stream's shards (the primary and at most one per slot) holds what its
        // threads held, in whole pages (expandable) or 2 MiB small segments, plus one page
        // grown ahead: the bound does not depend on rounds or on how often threads came and went.
        const std::int64_t shards = detail::ThreadSlots::kSlots + 1;
        EXPECT_LE(m.reserved_bytes[0].peak, held_bytes + shards * 2 * static_cast<std::int64_t>(kPage)) << where;
        if (round == 0) reserved_after_first = m.reserved_bytes[0].current;
        EXPECT_LE(m.reserved_bytes[0].current, reserved_after_first + shards * static_cast<std::int64_t>(kPage))
            << where;
      }
      f.allocator.empty_cache();
      EXPECT_EQ(f.provider->in_use(), 0u);
      EXPECT_EQ(f.allocator.stats().reserved_bytes[0].current, 0);
    }
  }
}

// A forward pass on one thread, its backward on another on the same stream (PyTorch's autograd
// engine), taking turns: the backward frees the forward's activations and allocates gradients.
// Never at once, so the stream keeps one shard and reserves exactly what one thread doing both
// in sequence reserves; with a slot shard per thread (always), the backward thread takes the
// forward's free blocks before growing, and reserves at most its own step's blocks more.
TEST(StreamThreadShards, ForwardAndBackwardThreadsOnOneStreamReserveWhatOneThreadDoes) {
  const std::vector<std::size_t> activations = {3 * MiB, 512 * 1024, 6 * MiB, 64 * 1024, 2 * MiB + 4096, 9 * MiB};
  constexpr int kSteps = 40;
  auto forward = [&](CachingAllocator& a, std::vector<void*>& saved) {
    for (std::size_t n : activations) saved.push_back(a.allocate(n, kStreamA));
  };
  auto backward = [&](CachingAllocator& a, std::vector<void*>& saved) {
    std::vector<void*> grads;
    while (!saved.empty()) {
      grads.push_back(a.allocate(activations[saved.size() - 1] / 2 + 4096, kStreamA));
      a.deallocate(saved.back());
      saved.pop_back();
    }
    for (void* g : grads) a.deallocate(g);
  };
  std::int64_t one_thread_reserved = 0;
  {
    Fixture f;
    std::vector<void*> saved;
    for (int step = 0; step < kSteps; ++step) {
      forward(f.allocator, saved);
      backward(f.allocator, saved);
    }
    one_thread_reserved = f.allocator.stats().reserved_bytes[0].peak;
  }
  for (ThreadShards mode : {ThreadShards::adaptive, ThreadShards::always}) {
    Fixture f(with_thread_shards(mode));
    std::vector<void*> saved;
    std::int64_t backward_peak = 0;
    std::barrier turn(2);  // the two threads live through every step, as the engine's do
    std::thread forward_thread([&] {
      for (int step = 0; step < kSteps; ++step) {
        forward(f.allocator, saved);
        turn.arrive_and_wait();  // the backward runs
        turn.arrive_and_wait();
      }
    });
    std::thread backward_thread([&] {
      for (int step = 0; step < kSteps; ++step) {
        turn.arrive_and_wait();
        f.allocator.reset_peak_stats();
        backward(f.allocator, saved);
        backward_peak = std::max(backward_peak, f.allocator.stats().allocated_bytes[0].peak);
        turn.arrive_and_wait();
      }
    });
    forward_thread.join();
    backward_thread.join();
    const MemoryStats m = f.allocator.stats();
    EXPECT_EQ(m.allocated_bytes[0].current, 0) << to_string(mode);
    EXPECT_EQ(m.active[0].current, 0) << to_string(mode);
    if (mode == ThreadShards::adaptive) {
      EXPECT_EQ(m.reserved_bytes[0].peak, one_thread_reserved) << "threads taking turns never split the stream";
    } else {
      EXPECT_LE(m.reserved_bytes[0].peak, one_thread_reserved + backward_peak + static_cast<std::int64_t>(kPage));
    }
  }
}

// A provider whose segments of kGatedBytes or more wait for the test to open a gate: the thread
// that asked holds its shard's lock meanwhile (the provider runs under it).
class GatedProvider : public HostSegmentProvider {
 public:
  static constexpr std::size_t kGatedBytes = 64 * MiB;
  using HostSegmentProvider::HostSegmentProvider;
  void* allocate_segment(std::size_t bytes, StreamKey stream) override {
    if (bytes >= kGatedBytes) {
      std::unique_lock lock(mutex_);
      ++entered_;
      changed_.notify_all();
      changed_.wait(lock, [&] { return open_; });
      open_ = false;
    }
    return HostSegmentProvider::allocate_segment(bytes, stream);
  }
  void wait_entered(int n) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return entered_ >= n; });
  }
  void open() {
    std::lock_guard lock(mutex_);
    open_ = true;
    changed_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int entered_ = 0;
  bool open_ = false;
};

// Adaptive: a thread that keeps finding the stream's shard locked by another (here the other
// holds it for as long as its provider call waits) counts contentions; past the threshold the
// stream splits, and the waiting thread moves to its own slot shard, whose request no longer
// waits for the busy one. Statistics stay exact throughout.
TEST(StreamThreadShards, ThreadsContendingForAStreamSplitItAndStopWaiting) {
  AllocatorConfig config = with_thread_shards(ThreadShards::adaptive, /*expandable=*/false);
  auto provider = std::make_shared<GatedProvider>(64ull << 30);
  auto events = std::make_shared<HostStreamEvents>(true);
  CachingAllocator allocator(0, provider, events, config);
  // A second stream first: the device ledger then exists before any slot shard is made (making
  // it reads every shard, under its lock).
  void* other = allocator.allocate(4096, kStreamB);
  bool moved = false;
  int rounds = 0;
  for (int entered = 1; entered <= 2000 && !moved; ++entered, ++rounds) {
    void* big = nullptr;
    std::thread holder([&] { big = allocator.allocate(GatedProvider::kGatedBytes, kStreamA); });
    provider->wait_entered(entered);  // the holder is in its provider, the stream's shard locked
    std::atomic<bool> served{false};
    void* small = nullptr;
    std::thread waiter([&] {
      small = allocator.allocate(4096, kStreamA);
      served = true;
    });
    // Served while the shard is still locked: from its slot shard. (A slow first serve there is
    // seen in the next round, whose waiter goes to its slot shard at once.)
    for (int i = 0; i < 40 && !served.load(); ++i) std::this_thread::sleep_for(std::chrono::microseconds(50));
    moved = served.load();
    provider->open();
    holder.join();
    waiter.join();
    allocator.deallocate(small);
    allocator.deallocate(big);
    allocator.empty_cache();  // so that the next round's big request asks the provider again
  }
  EXPECT_TRUE(moved) << "after " << rounds << " rounds of contention";
  EXPECT_GE(rounds, 64) << "a stream splits only once contended often (kContentionsToSplit)";
  allocator.deallocate(other);
  const MemoryStats m = allocator.stats();
  EXPECT_EQ(m.allocated_bytes[0].current, 0);
  EXPECT_EQ(m.allocated_bytes[0].peak, static_cast<std::int64_t>(GatedProvider::kGatedBytes + 2 * 4096));
  EXPECT_EQ(m.active[0].current, 0);
}

// A thread takes the lowest free slot at its first need and gives it back at exit: threads one
// after another all get the same slot, threads at once get different ones, and past kSlots
// threads at once the rest get none (they stay on the stream's primary shard).
TEST(StreamThreadShards, ThreadExitGivesItsSlotBack) {
  using detail::ThisThreadSlot;
  using detail::ThreadSlots;
  ASSERT_EQ(detail::g_thread_slots.taken() & ~1u, 0u) << "no other thread of this binary holds a slot";
  const std::uint32_t main_thread = detail::g_thread_slots.taken();  // the main thread's, if it took one
  const int lowest = std::countr_one(main_thread);
  for (int i = 0; i < 50; ++i) {
    int slot = -2;
    std::thread([&] { slot = ThisThreadSlot::get(); }).join();
    EXPECT_EQ(slot, lowest) << "thread " << i;
    EXPECT_EQ(detail::g_thread_slots.taken(), main_thread) << "thread " << i << " gave its slot back";
  }
  constexpr int kThreads = ThreadSlots::kSlots + 4;
  std::barrier all_asked(kThreads + 1);
  std::vector<int> slots(kThreads, -2);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      slots[static_cast<std::size_t>(t)] = ThisThreadSlot::get();
      EXPECT_EQ(ThisThreadSlot::get(), slots[static_cast<std::size_t>(t)]) << "a thread keeps its slot";
      all_asked.arrive_and_wait();
      all_asked.arrive_and_wait();
    });
  }
  all_asked.arrive_and_wait();
  const int free_slots = ThreadSlots::kSlots - std::popcount(main_thread);
  std::set<int> distinct;
  int none = 0;
  for (int s : slots) {
    if (s < 0) ++none;
    else distinct.insert(s);
  }
  EXPECT_EQ(static_cast<int>(distinct.size()), free_slots);
  EXPECT_EQ(none, kThreads - free_slots);
  EXPECT_EQ(std::popcount(detail::g_thread_slots.taken()), ThreadSlots::kSlots);
  all_asked.arrive_and_wait();
  for (auto& th : threads) th.join();
  EXPECT_EQ(detail::g_thread_slots.taken(), main_thread) << "every exited thread gave its slot back";
}

// Threads on one stream, each on its slot shard: record_stream makes a block's free wait for
// the other stream's events (active until they complete, whichever thread frees it), external
// holds keep a block out of reuse, a pool's blocks stay the pool's, and empty_cache returns every
// shard's memory.
TEST(StreamThreadShards, RecordStreamHoldsPoolsAndEmptyCacheOverThreadShards) {
  Fixture f(with_thread_shards(ThreadShards::always), 8ull << 30, /*auto_events=*/false);
  const PoolId pool = CachingAllocator::new_pool_id();
  f.allocator.create_pool(pool);
  constexpr int kThreads = 6;
  constexpr int kBlocks = 5;
  std::vector<std::vector<void*>> blocks(kThreads);
  std::vector<void*> pooled(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kBlocks; ++i) blocks[static_cast<std::size_t>(t)].push_back(f.allocator.allocate(MiB, kStreamA));
      pooled[static_cast<std::size_t>(t)] = f.allocator.allocate(MiB, kStreamA, pool);
      f.allocator.record_stream(blocks[static_cast<std::size_t>(t)][0], kStreamB);
      f.allocator.record_stream(blocks[static_cast<std::size_t>(t)][1], kStreamA);  // its own stream: nothing
      f.allocator.add_external_hold(blocks[static_cast<std::size_t>(t)][2]);
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(f.allocator.pool_allocated_bytes(pool), kThreads * MiB);
  EXPECT_EQ(f.allocator.pool_allocated_bytes(PoolId{}), kThreads * kBlocks * MiB);
  // Freed on other threads than the ones that allocated.
  threads.clear();
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (void* p : blocks[static_cast<std::size_t>((t + 1) % kThreads)]) f.allocator.deallocate(p);
      f.allocator.deallocate(pooled[static_cast<std::size_t>((t + 2) % kThreads)]);
    });
  }
  for (auto& th : threads) th.join();
  MemoryStats m = f.allocator.stats();
  EXPECT_EQ(m.allocated_bytes[0].current, 0);
  EXPECT_EQ(m.active[0].current, 2 * kThreads) << "the blocks recorded on stream B, and the held ones";
  EXPECT_EQ(f.allocator.pool_allocated_bytes(pool), 0u);
  const MemorySnapshot snap = f.allocator.snapshot(false);
  std::size_t pending = 0;
  for (const SegmentSnapshot& s : snap.segments) {
    EXPECT_EQ(s.stream, kStreamA) << "every shard's segments are the stream's";
    for (const BlockSnapshot& b : s.blocks) pending += b.state == BlockSnapshot::State::active_pending_free;
  }
  EXPECT_EQ(pending, 2u * kThreads);
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(f.allocator.external_holds(blocks[static_cast<std::size_t>(t)][2]), 1u);
    f.allocator.release_external_hold(blocks[static_cast<std::size_t>(t)][2]);
  }
  EXPECT_EQ(f.allocator.stats().active[0].current, kThreads) << "the blocks recorded on stream B";
  f.events->complete_all();
  f.allocator.process_events();
  m = f.allocator.stats();
  EXPECT_EQ(m.active[0].current, 0);
  EXPECT_EQ(m.num_cross_stream_reuses, 0);
  f.allocator.release_pool(pool);
  f.allocator.empty_cache();
  EXPECT_EQ(f.provider->in_use(), 0u) << "every slot shard's memory went back";
  EXPECT_EQ(f.allocator.stats().reserved_bytes[0].current, 0);
}

}  // namespace
}  // namespace cudakit::memory
