// The caching allocator under threads: statistics exact while threads allocate on their own
// streams, lending across streams, no memory shared. Names carry "Thread": CI runs them under
// ThreadSanitizer.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cudakit/memory/caching_allocator.hpp"
#include "cudakit/memory/memory_stats.hpp"
#include "memory/host_allocator_fixture.hpp"

namespace cudakit::memory {
namespace {

using testing::Fixture;
using testing::MiB;

// Threads on their own streams take turns holding memory, then all hold at once: the device's
// peaks are each phase's totals, exact, never the threads' peaks summed (See Note [Device-wide
// peaks]); a reader of the statistics runs meanwhile.
TEST(CachingAllocatorThreads, ConcurrentStreamsReportTheDevicePeaksExactly) {
  Fixture f;
  constexpr int kThreads = 6;
  constexpr int kBlocks = 20;
  std::mutex turn_mutex;
  std::condition_variable turn_changed;
  int turn = 0;  // thread `turn` holds its blocks; kThreads: all hold at once
  int churned = 0;  // under turn_mutex
  std::atomic<int> holding{0};
  std::atomic<bool> done{false};
  std::vector<std::thread> threads;
  const auto block = [](int t, int i) { return (std::size_t{1} << 20) * static_cast<std::size_t>(1 + (t + i) % 3) + 4096; };
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const auto stream = static_cast<StreamKey>(0x100 * (t + 1));
      // Churn below its turn: one small block at a time.
      for (int i = 0; i < 2000; ++i) f.allocator.deallocate(f.allocator.allocate(512, stream));
      std::unique_lock lock(turn_mutex);
      ++churned;
      turn_changed.notify_all();
      turn_changed.wait(lock, [&] { return turn == t && churned == kThreads; });
      lock.unlock();
      std::vector<void*> held;
      for (int i = 0; i < kBlocks; ++i) held.push_back(f.allocator.allocate(block(t, i), stream));
      for (void* p : held) f.allocator.deallocate(p);
      lock.lock();
      ++turn;
      turn_changed.notify_all();
      turn_changed.wait(lock, [&] { return turn == kThreads; });
      lock.unlock();
      held.clear();
      for (int i = 0; i < kBlocks; ++i) held.push_back(f.allocator.allocate(512, stream));
      ++holding;
      while (holding.load() < kThreads) std::this_thread::yield();
      for (void* p : held) f.allocator.deallocate(p);
    });
  }
  std::thread reader([&] {
    while (!done.load()) {
      const MemoryStats m = f.allocator.stats();
      EXPECT_LE(m.allocated_bytes[0].current, m.allocated_bytes[0].peak);
    }
  });
  for (auto& th : threads) th.join();
  done = true;
  reader.join();
  std::int64_t largest_turn = 0;
  for (int t = 0; t < kThreads; ++t) {
    std::int64_t sum = 0;
    for (int i = 0; i < kBlocks; ++i) sum += static_cast<std::int64_t>(block(t, i));
    largest_turn = std::max(largest_turn, sum);
  }
  const MemoryStats m = f.allocator.stats();
  EXPECT_EQ(m.allocated_bytes[0].peak, largest_turn);
  EXPECT_EQ(m.allocated_bytes[2].peak, largest_turn) << "every turn's blocks are large";
  EXPECT_EQ(m.allocation[1].peak, kThreads * kBlocks) << "all threads' small blocks at once";
  EXPECT_EQ(m.allocation[0].peak, kThreads * kBlocks);
  EXPECT_EQ(m.requested_bytes[1].peak, kThreads * kBlocks * 512);
  EXPECT_EQ(m.allocated_bytes[0].current, 0);
  EXPECT_EQ(m.active[0].current, 0);
}

// Threads on their own streams take turns: each turn's thread allocates blocks its own shard
// cannot serve (the previous turn's thread freed them, so they are lent across streams), frees
// them on its own stream, and the statistics read at once, with no other operation between,
// must show nothing active: the program freed everything on the stream it allocated it on (See
// Note [Lent blocks in the statistics]). Each turn also checks that no two live blocks overlap.
TEST(CachingAllocatorThreads, TurnsOfLendingLeaveNothingActiveAfterTheFrees) {
  for (const bool expandable : {false, true}) {
    AllocatorConfig config;
    config.expandable_segments = expandable;
    Fixture f(config);
    constexpr int kThreads = 4;
    constexpr int kRounds = 30;
    std::mutex turn_mutex;
    std::condition_variable turn_changed;
    int turn = 0;  // thread turn % kThreads runs; kThreads * kRounds: done
    std::vector<std::string> failures;  // under turn_mutex
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        std::mt19937 rng(static_cast<unsigned>(7 + t));
        const auto stream = static_cast<StreamKey>(0x100 * (t + 1));
        for (;;) {
          std::unique_lock lock(turn_mutex);
          turn_changed.wait(lock, [&] { return turn % kThreads == t || turn >= kThreads * kRounds; });
          if (turn >= kThreads * kRounds) return;
          lock.unlock();
          std::vector<void*> held;
          for (int i = 0; i < 6; ++i) held.push_back(f.allocator.allocate((1 + rng() % 12) * MiB + rng() % 4096, stream));
          std::sort(held.begin(), held.end());
          for (std::size_t i = 1; i < held.size(); ++i) {
            if (static_cast<char*>(held[i - 1]) + f.allocator.allocation_size(held[i - 1]) > held[i]) {
              std::lock_guard l(turn_mutex);
              failures.push_back("overlapping blocks in turn " + std::to_string(turn));
            }
          }
          for (void* p : held) f.allocator.deallocate(p);
          const MemoryStats m = f.allocator.stats();
          lock.lock();
          if (m.active[0].current != 0 || m.active_bytes[0].current != 0 || m.allocation[0].current != 0) {
            failures.push_back("turn " + std::to_string(turn) + ": active " + std::to_string(m.active[0].current) +
                               " (" + std::to_string(m.active_bytes[0].current) + " bytes), allocations " +
                               std::to_string(m.allocation[0].current) + ", cross-stream reuses " +
                               std::to_string(m.num_cross_stream_reuses));
          }
          ++turn;
          turn_changed.notify_all();
        }
      });
    }
    for (auto& th : threads) th.join();
    EXPECT_TRUE(failures.empty()) << "expandable " << expandable << ": " << failures.size() << " failures, first: "
                                  << (failures.empty() ? "" : failures.front());
    EXPECT_GT(f.allocator.stats().num_cross_stream_reuses, 0) << "the turns lent memory across streams";
  }
}

// Many threads on their own streams at once, writing every byte they get, while another reads
// the statistics (device-wide peaks are kept as the threads create their shards and allocate).
TEST(CachingAllocatorThreads, ConcurrentStreamsNeverShareMemory) {
  Fixture f;
  constexpr int kThreads = 8;
  std::vector<std::thread> threads;
  std::atomic<int> bad{0};
  std::atomic<int> running{kThreads};
  std::vector<std::int64_t> thread_peaks(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(t));
      std::vector<std::pair<unsigned char*, std::size_t>> live;
      const auto stream = static_cast<StreamKey>(0x100 * (t + 1));
      std::int64_t held = 0;
      for (int i = 0; i < 20000; ++i) {
        if (live.size() < 32 && (live.empty() || rng() % 2)) {
          const std::size_t n = 1 + rng() % (rng() % 8 == 0 ? 3 * MiB : 16384);
          auto* p = static_cast<unsigned char*>(f.allocator.allocate(n, stream));
          std::memset(p, t + 1, n);
          live.emplace_back(p, n);
          held += static_cast<std::int64_t>(f.allocator.allocation_size(p));
          thread_peaks[static_cast<std::size_t>(t)] = std::max(thread_peaks[static_cast<std::size_t>(t)], held);
        } else {
          const std::size_t k = rng() % live.size();
          auto [p, n] = live[k];
          for (std::size_t j = 0; j < n; j += 61) {
            if (p[j] != t + 1) ++bad;
          }
          held -= static_cast<std::int64_t>(f.allocator.allocation_size(p));
          f.allocator.deallocate(p);
          live.erase(live.begin() + static_cast<long>(k));
        }
      }
      for (auto [p, n] : live) f.allocator.deallocate(p);
      --running;
    });
  }
  int reads = 0, peak_below_current = 0;
  while (running.load() > 0) {
    const MemoryStats m = f.allocator.stats();
    peak_below_current += m.allocated_bytes[0].peak < m.allocated_bytes[0].current;
    ++reads;
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_EQ(peak_below_current, 0) << "of " << reads << " reads";
  const MemoryStats m = f.allocator.stats();
  EXPECT_EQ(m.allocated_bytes[0].current, 0);
  std::int64_t sum = 0, largest = 0;
  for (std::int64_t p : thread_peaks) {
    sum += p;
    largest = std::max(largest, p);
  }
  EXPECT_GE(m.allocated_bytes[0].peak, largest);
  EXPECT_LE(m.allocated_bytes[0].peak, sum);
}

// Threads on their own streams lending memory to each other (work finishes at once, so every
// free block may pass between streams): live blocks never overlap. Runs under TSan too.
TEST(CachingAllocatorThreads, ConcurrentStreamsLendingToEachOtherNeverShareMemory) {
  for (CrossStreamReuse mode : {CrossStreamReuse::opportunistic, CrossStreamReuse::dependencies}) {
    AllocatorConfig config;
    config.cross_stream_reuse = mode;
    Fixture f(config);
    constexpr int kThreads = 4;
    std::atomic<int> bad{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        std::mt19937 rng(static_cast<unsigned>(100 + t));
        std::vector<std::pair<unsigned char*, std::size_t>> live;
        const auto stream = static_cast<StreamKey>(0x100 * (t + 1));
        for (int i = 0; i < 6000; ++i) {
          // Each thread's live set swells and drains in turn, so that memory changes hands.
          const std::size_t cap = ((i / 500) % kThreads) == t ? 48 : 4;
          if (live.size() < cap && (live.empty() || rng() % 3 != 0)) {
            const std::size_t n = 1 + rng() % (rng() % 4 == 0 ? 2 * MiB : 32768);
            auto* p = static_cast<unsigned char*>(f.allocator.allocate(n, stream));
            std::memset(p, t + 1, n);
            live.emplace_back(p, n);
            if (rng() % 16 == 0) f.allocator.record_stream(p, static_cast<StreamKey>(0x100 * (1 + rng() % kThreads)));
          } else if (!live.empty()) {
            const std::size_t k = rng() % live.size();
            auto [p, n] = live[k];
            for (std::size_t j = 0; j < n; j += 61) {
              if (p[j] != t + 1) ++bad;
            }
            f.allocator.deallocate(p);
            live.erase(live.begin() + static_cast<long>(k));
          }
        }
        for (auto [p, n] : live) f.allocator.deallocate(p);
      });
    }
    for (auto& th : threads) th.join();
    EXPECT_EQ(bad.load(), 0) << to_string(mode);
    EXPECT_GT(f.allocator.stats().num_cross_stream_reuses, 0) << to_string(mode);
    f.allocator.empty_cache();
    EXPECT_EQ(f.provider->in_use(), 0u);
  }
}

// Rounds of threads on their own streams: each climbs to a random holding, churning below it
// (a block freed and asked for again), all hold at once at a barrier, then all free. The
// device's peak of each round is known exactly: the sum of the holdings at the barrier. Read
// there (and after the frees) with the peaks reset before each round, every statistic must be
// exact, with shards spending and giving back their headroom all the while (See Note
// [Device-wide peaks]); a reader of the statistics runs meanwhile, forcing collapses.
TEST(CachingAllocatorThreads, RoundsOfConcurrentStreamsKeepEveryPeakExact) {
  Fixture f;
  constexpr int kThreads = 8;
  constexpr int kRounds = 40;
  std::mutex m;
  std::condition_variable cv;
  int arrived = 0;
  int generation = 0;
  // All threads and the checker meet here; returns once everyone has.
  const auto barrier = [&] {
    std::unique_lock lock(m);
    const int g = generation;
    if (++arrived == kThreads + 1) {
      arrived = 0;
      ++generation;
      cv.notify_all();
    } else {
      cv.wait(lock, [&] { return generation != g; });
    }
  };
  std::vector<std::int64_t> held_bytes(kThreads), held_blocks(kThreads), held_requested(kThreads);
  std::atomic<bool> done{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(31 + t));
      const auto stream = static_cast<StreamKey>(0x100 * (t + 1));
      for (int round = 0; round < kRounds; ++round) {
        std::vector<std::pair<void*, std::size_t>> held;
        const int blocks = 1 + static_cast<int>(rng() % 12);
        for (int i = 0; i < blocks; ++i) {
          const std::size_t n = 512 * (1 + rng() % (rng() % 3 == 0 ? 8192 : 64));
          held.emplace_back(f.allocator.allocate(n, stream), n);
          // Churn below the holding: a held block freed and the same size asked for again.
          for (int c = 0; c < 20; ++c) {
            auto& [p, size] = held[rng() % held.size()];
            f.allocator.deallocate(p);
            p = f.allocator.allocate(size, stream);
          }
        }
        held_blocks[t] = blocks;
        held_bytes[t] = held_requested[t] = 0;
        for (auto [p, n] : held) {
          held_bytes[t] += static_cast<std::int64_t>(f.allocator.allocation_size(p));
          held_requested[t] += static_cast<std::int64_t>(n);
        }
        barrier();  // all hold
        barrier();  // checked
        for (auto [p, n] : held) f.allocator.deallocate(p);
        barrier();  // all freed
        barrier();  // checked, peaks reset
      }
    });
  }
  std::thread reader([&] {
    while (!done.load()) {
      const MemoryStats s = f.allocator.stats();
      EXPECT_LE(s.allocated_bytes[0].current, s.allocated_bytes[0].peak);
      EXPECT_LE(s.allocation[0].current, s.allocation[0].peak);
    }
  });
  for (int round = 0; round < kRounds; ++round) {
    barrier();
    std::int64_t bytes = 0, blocks = 0, requested = 0;
    for (int t = 0; t < kThreads; ++t) {
      bytes += held_bytes[t];
      blocks += held_blocks[t];
      requested += held_requested[t];
    }
    MemoryStats s = f.allocator.stats();
    EXPECT_EQ(s.allocated_bytes[0].current, bytes) << "round " << round;
    EXPECT_EQ(s.allocated_bytes[0].peak, bytes) << "round " << round;
    EXPECT_EQ(s.allocation[0].peak, blocks) << "round " << round;
    EXPECT_EQ(s.active[0].peak, blocks) << "round " << round;
    EXPECT_EQ(s.active_bytes[0].peak, bytes) << "round " << round;
    EXPECT_EQ(s.requested_bytes[0].peak, requested) << "round " << round;
    EXPECT_EQ(s.allocated_bytes[1].current + s.allocated_bytes[2].current, bytes) << "round " << round;
    barrier();
    barrier();
    s = f.allocator.stats();
    EXPECT_EQ(s.allocated_bytes[0].current, 0) << "round " << round;
    EXPECT_EQ(s.allocation[0].current, 0) << "round " << round;
    EXPECT_EQ(s.active[0].current, 0) << "round " << round;
    EXPECT_EQ(s.allocated_bytes[0].peak, bytes) << "round " << round << ": nothing held more since";
    EXPECT_EQ(s.reserved_bytes[0].current, static_cast<std::int64_t>(f.provider->in_use())) << "round " << round;
    f.allocator.reset_peak_stats();
    EXPECT_EQ(f.allocator.stats().allocated_bytes[0].peak, 0);
    barrier();
  }
  for (auto& th : threads) th.join();
  done = true;
  reader.join();
}

}  // namespace
}  // namespace cudakit::memory
