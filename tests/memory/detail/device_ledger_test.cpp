// The device's ledger of statistics (Note [Device-wide peaks]) driven as the caching allocator
// drives it: each change applied to the shard's own statistics, then to its headroom while it has
// some, else through the ledger. The ledger's classes are internal to the library, so this binary
// compiles its own copy (tests/CMakeLists.txt).

#include "memory/detail/device_ledger.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <barrier>
#include <cstdint>
#include <random>
#include <thread>
#include <vector>

namespace cudakit::memory::detail {
namespace {

constexpr std::int64_t MiB = 1 << 20;

MemoryStats observed(const Shard& s) { return s.stats; }

// The caching allocator's Engine::count(), with s locked as there.
template <class Change>
void count(DeviceLedger& ledger, Shard& s, Change&& change) {
  std::lock_guard lock(s.lock);
  change(s.stats);
  if (!ledger.active()) return;
  if (s.local) {
    change(s.headroom);
    if (!s.headroom.overdrawn() && !ledger.collapse_wanted()) return;
    ledger.settle(s);
    return;
  }
  ledger.apply(s, [&](auto& sums) { change(sums); });
}

void allocate(DeviceLedger& ledger, Shard& s, std::int64_t bytes) {
  count(ledger, s, [&](auto& m) {
    m.allocation[0].increase(1);
    m.allocated_bytes[0].increase(bytes);
  });
}
void free(DeviceLedger& ledger, Shard& s, std::int64_t bytes) {
  count(ledger, s, [&](auto& m) {
    m.allocation[0].decrease(1);
    m.allocated_bytes[0].decrease(bytes);
  });
}

// Two shards, the ledger started as the allocator starts it when the second one appears.
struct TwoShards {
  DeviceLedger ledger;
  Shard first, second;
  TwoShards() {
    allocate(ledger, first, 4096);
    free(ledger, first, 4096);
    EXPECT_FALSE(ledger.count_shard());
    EXPECT_TRUE(ledger.count_shard());
    std::lock_guard lock(first.lock);
    ledger.start(observed(first));
  }
};

// See Note [Asking for headroom below the own peak]: a shard that alternates alloc and free, its
// changes' count made odd by one other change first, asked on every eighth change right after an
// allocation, at its own peak, and never got headroom: every change went through the ledger.
TEST(DeviceLedger, AShardAlternatingOutOfStepGetsHeadroom) {
  TwoShards t;
  count(t.ledger, t.second, [](auto& m) { m.reserved_bytes[0].increase(2 * MiB); });
  for (int i = 0; i < 100; ++i) {
    allocate(t.ledger, t.second, MiB);
    free(t.ledger, t.second, MiB);
  }
  EXPECT_TRUE(t.second.local) << "the alternating shard never got headroom";
  MemoryStats device;
  t.ledger.read(device);
  EXPECT_EQ(device.allocated_bytes[0].current, 0);
  EXPECT_EQ(device.allocated_bytes[0].peak, MiB);
  EXPECT_EQ(device.reserved_bytes[0].peak, 2 * MiB);
}

// A change through the ledger notes that it passed a peak as it increases (See Note [Reading
// counters just written]): past the device's peak while the other shard holds headroom, the
// headroom is taken back and the exact sum, still under the peak, leaves it; past it with no
// headroom anywhere, the peak rises to the sum at once.
TEST(DeviceLedger, AChangePastThePeakIsTheDevicesExactly) {
  TwoShards t;
  allocate(t.ledger, t.second, 8 * MiB);
  free(t.ledger, t.second, 8 * MiB);
  for (int i = 0; i < 40; ++i) {  // below its own peak: the second shard is granted headroom
    allocate(t.ledger, t.second, MiB);
    free(t.ledger, t.second, MiB);
  }
  ASSERT_TRUE(t.second.local);
  allocate(t.ledger, t.first, 6 * MiB);  // bound with the headroom passes 8 MiB; the sum does not
  MemoryStats device;
  t.ledger.read(device);
  EXPECT_EQ(device.allocated_bytes[0].peak, 8 * MiB);
  EXPECT_EQ(device.allocated_bytes[0].current, 6 * MiB);
  allocate(t.ledger, t.second, 3 * MiB);  // the sum passes 8 MiB: 9 is the new peak
  free(t.ledger, t.first, 6 * MiB);
  t.ledger.read(device);
  EXPECT_EQ(device.allocated_bytes[0].peak, 9 * MiB);
  EXPECT_EQ(device.allocated_bytes[0].current, 3 * MiB);
  EXPECT_EQ(device.allocation[0].peak, 2);
}

// Every peak the ledger reports is the highest sum of the shards' values at one moment, whatever
// the shards' grants and collapses (partial ones among them: Note [Collapsing only as far as
// needed]), against a reference that adds everything up after each change.
TEST(DeviceLedger, PeaksAreTheDevicesExactlyUnderRandomChanges) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    DeviceLedger ledger;
    std::array<Shard, 4> shards;
    std::array<std::int64_t, 4> live_bytes{}, live_blocks{};
    std::int64_t peak_bytes = 0, peak_blocks = 0;
    for (std::size_t i = 0; i < shards.size(); ++i) {
      if (ledger.count_shard()) {
        std::lock_guard lock(shards[0].lock);
        ledger.start(observed(shards[0]));
      }
    }
    std::mt19937_64 rng(seed);
    for (int step = 0; step < 4000; ++step) {
      const std::size_t k = rng() % shards.size();
      // Shards take turns at swinging high: the device's peak moves between them.
      const bool grow = live_blocks[k] == 0 || rng() % 100 < (step / 500 % 4 == static_cast<int>(k) ? 60 : 45);
      const std::int64_t bytes = static_cast<std::int64_t>(1 + rng() % 8) * MiB;
      if (grow) {
        allocate(ledger, shards[k], bytes);
        live_bytes[k] += bytes;
        ++live_blocks[k];
      } else {
        const std::int64_t mean = live_bytes[k] / live_blocks[k];
        free(ledger, shards[k], mean);
        live_bytes[k] -= mean;
        --live_blocks[k];
      }
      std::int64_t sum_bytes = 0, sum_blocks = 0;
      for (std::size_t i = 0; i < shards.size(); ++i) {
        sum_bytes += live_bytes[i];
        sum_blocks += live_blocks[i];
      }
      peak_bytes = std::max(peak_bytes, sum_bytes);
      peak_blocks = std::max(peak_blocks, sum_blocks);
      if (step % 997 == 0 || step == 3999) {
        MemoryStats device;
        ledger.read(device);
        ASSERT_EQ(device.allocated_bytes[0].peak, peak_bytes) << "seed " << seed << ", step " << step;
        ASSERT_EQ(device.allocation[0].peak, peak_blocks) << "seed " << seed << ", step " << step;
        ASSERT_EQ(device.allocated_bytes[0].current, sum_bytes) << "seed " << seed << ", step " << step;
      }
    }
  }
}

// Threads on shards of their own, in rounds: each allocates up to a random level (growing only),
// all meet, then each frees all it holds and all meet again. Whatever the interleaving, the
// device's sum is highest where they meet, so its peak is exactly the highest sum of the levels of
// one round, while grants, settlements and collapses run concurrently (a lost or doubled update
// under the shard and ledger locks shows as a wrong peak or a current left over).
TEST(DeviceLedgerThreads, PeaksOfConcurrentShardsAreTheSumsWhereTheyMeet) {
  constexpr int kThreads = 4;
  constexpr int kRounds = 60;
  DeviceLedger ledger;
  std::array<Shard, kThreads> shards;
  for (int i = 0; i < kThreads; ++i) {
    if (ledger.count_shard()) {
      std::lock_guard lock(shards[0].lock);
      ledger.start(observed(shards[0]));
    }
  }
  ASSERT_TRUE(ledger.active());
  // levels[r][t]: thread t's bytes held when round r's threads meet, drawn beforehand.
  std::vector<std::array<std::int64_t, kThreads>> levels(kRounds);
  std::vector<std::array<std::vector<std::int64_t>, kThreads>> sizes(kRounds);
  std::mt19937_64 rng(7);
  std::int64_t expected_peak = 0, expected_blocks_peak = 0;
  for (int r = 0; r < kRounds; ++r) {
    std::int64_t sum = 0, blocks = 0;
    for (int t = 0; t < kThreads; ++t) {
      // The shard holding most moves between rounds, as a server's busy stream does.
      const int count = 1 + static_cast<int>(rng() % (t == r % kThreads ? 40 : 12));
      for (int i = 0; i < count; ++i) {
        sizes[r][t].push_back(static_cast<std::int64_t>(1 + rng() % 64) * 4096);
        levels[r][t] += sizes[r][t].back();
      }
      sum += levels[r][t];
      blocks += count;
    }
    expected_peak = std::max(expected_peak, sum);
    expected_blocks_peak = std::max(expected_blocks_peak, blocks);
  }
  std::barrier meet(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRounds; ++r) {
        for (std::int64_t bytes : sizes[r][t]) allocate(ledger, shards[t], bytes);
        meet.arrive_and_wait();
        for (std::int64_t bytes : sizes[r][t]) free(ledger, shards[t], bytes);
        meet.arrive_and_wait();
      }
    });
  }
  for (auto& th : threads) th.join();
  MemoryStats device;
  ledger.read(device);
  EXPECT_EQ(device.allocated_bytes[0].peak, expected_peak);
  EXPECT_EQ(device.allocation[0].peak, expected_blocks_peak);
  EXPECT_EQ(device.allocated_bytes[0].current, 0);
  EXPECT_EQ(device.allocation[0].current, 0);
}

}  // namespace
}  // namespace cudakit::memory::detail
