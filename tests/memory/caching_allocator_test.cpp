// Host tier: the caching allocator's policy on host memory standing in for a device.

#include "cudakit/memory/caching_allocator.hpp"

#include <limits>
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <stdexcept>
#include <thread>

#include "cudakit/core/error.hpp"
#include "cudakit/memory/alloc_replay.hpp"
#include "cudakit/memory/alloc_trace.hpp"
#include "cudakit/memory/allocator_config.hpp"
#include "cudakit/memory/host_segment_provider.hpp"
#include "cudakit/memory/snapshot.hpp"
#include "nlohmann/json.hpp"
#include "memory/host_allocator_fixture.hpp"
#include "support/paths.hpp"

namespace cudakit::memory {
namespace {

using testing::Fixture;
using testing::kStreamA;
using testing::kStreamB;
using testing::MiB;

AllocatorConfig classic() {
  AllocatorConfig c;
  c.expandable_segments = false;
  return c;
}

std::size_t blocks_in_segments(const CachingAllocator& a) {
  std::size_t n = 0;
  for (const auto& s : a.snapshot().segments) n += s.blocks.size();
  return n;
}

class CachingAllocatorModes : public ::testing::TestWithParam<bool> {
 protected:
  AllocatorConfig config() const {
    AllocatorConfig c;
    c.expandable_segments = GetParam();
    return c;
  }
};
INSTANTIATE_TEST_SUITE_P(Expandable, CachingAllocatorModes, ::testing::Bool());

TEST_P(CachingAllocatorModes, AllocationsAreAlignedDisjointAndWritable) {
  Fixture f(config());
  std::vector<std::pair<char*, std::size_t>> blocks;
  std::mt19937 rng(1);
  for (int i = 0; i < 200; ++i) {
    const std::size_t n = 1 + rng() % (3 * MiB);
    auto* p = static_cast<char*>(f.allocator.allocate(n, kStreamA));
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 512, 0u);
    std::memset(p, i & 0xff, n);  // every byte is usable
    blocks.emplace_back(p, n);
  }
  std::sort(blocks.begin(), blocks.end());
  for (std::size_t i = 1; i < blocks.size(); ++i) {
    EXPECT_LE(blocks[i - 1].first + blocks[i - 1].second, blocks[i].first) << "overlap at " << i;
  }
  for (auto& [p, n] : blocks) f.allocator.deallocate(p);
  EXPECT_EQ(f.allocator.stats().allocated_bytes[0].current, 0);
}

TEST_P(CachingAllocatorModes, SplitsAndCoalesces) {
  Fixture f(config());
  void* a = f.allocator.allocate(100 * 1024, kStreamA);
  void* b = f.allocator.allocate(100 * 1024, kStreamA);
  void* c = f.allocator.allocate(100 * 1024, kStreamA);
  EXPECT_EQ(static_cast<char*>(b), static_cast<char*>(a) + 100 * 1024);  // carved from one segment
  EXPECT_EQ(blocks_in_segments(f.allocator), 4u);                         // a, b, c, free rest
  f.allocator.deallocate(b);
  EXPECT_EQ(f.allocator.stats().inactive_split[0].current, 2);  // the hole and the rest
  f.allocator.deallocate(a);
  f.allocator.deallocate(c);
  EXPECT_EQ(blocks_in_segments(f.allocator), 1u);  // all merged back
  EXPECT_EQ(f.allocator.stats().inactive_split[0].current, 0);
  void* big = f.allocator.allocate(300 * 1024, kStreamA);
  EXPECT_EQ(big, a);  // the merged block serves a request of the three sizes together
  f.allocator.deallocate(big);
}

TEST_P(CachingAllocatorModes, FreedBlockIsReusedAtOnceOnItsStreamOnly) {
  Fixture f(config(), 8ull << 30, /*auto_events=*/false);
  void* a = f.allocator.allocate(4096, kStreamA);
  void* b = f.allocator.allocate(4096, kStreamB);  // stream B has a shard of its own
  f.allocator.deallocate(a);
  void* on_b = f.allocator.allocate(4096, kStreamB);
  EXPECT_NE(on_b, a);  // stream A's queued work may still use it
  void* again = f.allocator.allocate(4096, kStreamA);
  EXPECT_EQ(again, a);  // stream order makes immediate reuse safe
  for (void* p : {b, on_b, again}) f.allocator.deallocate(p);
}

// See Note [Memory across streams]: opportunistic reuse hands another stream memory once an
// event recorded on the freeing stream after the free has completed, and never before.
TEST_P(CachingAllocatorModes, FreedBlockServesAnotherStreamOnceItsWorkIsDone) {
  // 12 MiB requests: whole segments in the classic mode, so that stream B's own cache never has
  // room for the next one.
  constexpr std::size_t kSize = 12 * MiB;
  Fixture f(config(), 8ull << 30, /*auto_events=*/false);
  void* a = f.allocator.allocate(kSize, kStreamA);
  void* b = f.allocator.allocate(4096, kStreamB);
  f.allocator.deallocate(a);
  void* early = f.allocator.allocate(kSize, kStreamB);
  EXPECT_NE(early, a) << "stream A's work may still use it";
  EXPECT_GE(f.events->live_tokens(), 1u) << "stream B's look recorded a mark on stream A";
  f.events->complete_up_to(kStreamA, f.events->last_ticket(kStreamA));
  void* late = f.allocator.allocate(kSize, kStreamB);
  EXPECT_EQ(late, a);
  EXPECT_EQ(f.allocator.stats().num_cross_stream_reuses, 1);
  // The lent block goes back to stream A only once stream B's work with it is done; freed on the
  // stream it was allocated on, it is inactive at once (See Note [Lent blocks in the statistics]).
  f.allocator.deallocate(late);
  const MemoryStats m = f.allocator.stats();
  EXPECT_EQ(m.active_bytes[0].current, m.allocated_bytes[0].current);
  void* on_a = f.allocator.allocate(kSize, kStreamA);
  EXPECT_NE(on_a, a) << "stream B's work may still use it";
  // Stream B's work finishes; a mark on stream B recorded after the free (one at a time is in
  // flight: process_events() records it once the older one is done) tells stream A so.
  f.events->complete_up_to(kStreamB, f.events->last_ticket(kStreamB));
  f.allocator.process_events();
  f.events->complete_up_to(kStreamB, f.events->last_ticket(kStreamB));
  void* back = f.allocator.allocate(kSize, kStreamA);
  EXPECT_EQ(back, a);
  for (void* p : {b, early, on_a, back}) f.allocator.deallocate(p);
  EXPECT_EQ(f.allocator.stats().allocated_bytes[0].current, 0);
  // A block lent to stream A here (expandable: stream B's arena grew for it) is free once a
  // mark on stream A recorded after the free has completed: process_events() records it, the
  // work finishes, the next one sees it.
  for (int round = 0; round < 2; ++round) {  // an older mark in flight first, then the new one
    f.allocator.process_events();
    f.events->complete_all();
  }
  f.allocator.process_events();
  EXPECT_EQ(f.allocator.stats().active_bytes[0].current, 0);
}

TEST_P(CachingAllocatorModes, CrossStreamReuseOffKeepsEachStreamToItsOwnMemory) {
  AllocatorConfig c = config();
  c.cross_stream_reuse = CrossStreamReuse::off;
  Fixture f(c);  // work finishes at once: only the policy keeps the streams apart
  void* a = f.allocator.allocate(3 * MiB, kStreamA);
  void* b = f.allocator.allocate(4096, kStreamB);
  f.allocator.deallocate(a);
  void* on_b = f.allocator.allocate(3 * MiB, kStreamB);
  EXPECT_NE(on_b, a);
  EXPECT_EQ(f.allocator.stats().num_cross_stream_reuses, 0);
  for (void* p : {b, on_b}) f.allocator.deallocate(p);
}

// With `dependencies`, a block whose freeing stream's work may still run is handed out at once,
// the requesting stream made to wait on an event recorded after the free.
TEST_P(CachingAllocatorModes, DependenciesMakeTheRequestingStreamWait) {
  AllocatorConfig c = config();
  c.cross_stream_reuse = CrossStreamReuse::dependencies;
  Fixture f(c, 8ull << 30, /*auto_events=*/false);
  void* a = f.allocator.allocate(3 * MiB, kStreamA);
  void* b = f.allocator.allocate(4096, kStreamB);
  const std::uint64_t work_before_free = f.events->last_ticket(kStreamA);
  f.allocator.deallocate(a);
  void* on_b = f.allocator.allocate(3 * MiB, kStreamB);
  EXPECT_EQ(on_b, a);
  EXPECT_GT(f.events->waited_ticket(kStreamB, kStreamA), work_before_free);
  for (void* p : {b, on_b}) f.allocator.deallocate(p);
}

// record_stream on a lent block: its own shard's stream becomes one more user to wait for.
TEST_P(CachingAllocatorModes, RecordStreamOnALentBlockWaitsForEveryUser) {
  constexpr std::size_t kSize = 12 * MiB;
  Fixture f(config(), 8ull << 30, /*auto_events=*/false);
  void* a = f.allocator.allocate(kSize, kStreamA);
  void* b = f.allocator.allocate(4096, kStreamB);
  f.allocator.deallocate(a);
  void* early = f.allocator.allocate(kSize, kStreamB);  // records a mark on stream A
  f.events->complete_all();
  void* lent = f.allocator.allocate(kSize, kStreamB);
  ASSERT_EQ(lent, a);
  f.allocator.record_stream(lent, kStreamA);
  f.allocator.deallocate(lent);
  f.events->complete_up_to(kStreamB, f.events->last_ticket(kStreamB));
  void* on_a = f.allocator.allocate(kSize, kStreamA);
  EXPECT_NE(on_a, a) << "stream A's own use, declared with record_stream, may still run";
  f.events->complete_all();
  void* later = f.allocator.allocate(kSize, kStreamA);
  EXPECT_EQ(later, a);
  for (void* p : {b, early, on_a, later}) f.allocator.deallocate(p);
}

TEST_P(CachingAllocatorModes, RecordStreamDelaysReuseUntilTheWorkFinishes) {
  Fixture f(config(), 8ull << 30, /*auto_events=*/false);
  void* a = f.allocator.allocate(4096, kStreamA);
  f.allocator.record_stream(a, kStreamB);
  f.allocator.deallocate(a);
  EXPECT_EQ(f.allocator.stats().allocated_bytes[0].current, 0);
  EXPECT_EQ(f.allocator.stats().active_bytes[0].current, 4096);  // pending free
  EXPECT_EQ(f.events->live_tokens(), 1u);
  void* b = f.allocator.allocate(4096, kStreamA);
  EXPECT_NE(b, a);  // stream B's work may still use it
  f.events->complete_up_to(kStreamB, f.events->last_ticket(kStreamB));
  void* c = f.allocator.allocate(4096, kStreamA);
  EXPECT_EQ(c, a);  // now it is free
  EXPECT_EQ(f.events->live_tokens(), 0u);
  f.allocator.deallocate(b);
  f.allocator.deallocate(c);
}

// Note [Frees during capture]: no event is recorded on a capturing stream; the block stays
// unusable until the capture has ended and the events recorded then have completed.
TEST_P(CachingAllocatorModes, FreeUsedOnACapturingStreamWaitsForTheCaptureToEnd) {
  Fixture f(config(), 8ull << 30, /*auto_events=*/false);
  void* a = f.allocator.allocate(4096, kStreamA);
  f.allocator.record_stream(a, kStreamB);
  f.events->set_capturing(kStreamB, true);
  f.allocator.deallocate(a);
  EXPECT_EQ(f.events->live_tokens(), 0u) << "no event may be recorded on a capturing stream";
  EXPECT_EQ(f.allocator.stats().allocated_bytes[0].current, 0);
  EXPECT_EQ(f.allocator.stats().active_bytes[0].current, 4096);
  void* b = f.allocator.allocate(4096, kStreamA);
  EXPECT_NE(b, a);
  f.events->complete_all();  // whatever completes, the deferred free has no event yet
  void* c = f.allocator.allocate(4096, kStreamA);
  EXPECT_NE(c, a);
  EXPECT_EQ(f.events->live_tokens(), 0u);

  f.events->set_capturing(kStreamB, false);
  void* d = f.allocator.allocate(4096, kStreamA);  // records the deferred free's event
  EXPECT_NE(d, a) << "stream B's work queued before the capture ended may still use it";
  EXPECT_EQ(f.events->live_tokens(), 1u);
  f.events->complete_up_to(kStreamB, f.events->last_ticket(kStreamB));
  void* e = f.allocator.allocate(4096, kStreamA);
  EXPECT_EQ(e, a);
  EXPECT_EQ(f.allocator.stats().active_bytes[0].current, 4 * 4096);
  for (void* p : {b, c, d, e}) f.allocator.deallocate(p);
  EXPECT_EQ(f.allocator.stats().active_bytes[0].current, 0);
}

// A pending free completing next to the recently freed block (Note [Recently freed blocks]) must
// merge with it, not corrupt the free index.
TEST_P(CachingAllocatorModes, PendingFreeNextToTheRecentlyFreedBlockMerges) {
  Fixture f(config(), 8ull << 30, /*auto_events=*/false);
  void* a = f.allocator.allocate(4096, kStreamA);
  void* b = f.allocator.allocate(4096, kStreamA);
  void* c = f.allocator.allocate(4096, kStreamA);
  ASSERT_EQ(static_cast<char*>(b), static_cast<char*>(a) + 4096);
  f.allocator.record_stream(a, kStreamB);
  f.allocator.deallocate(a);  // pending on stream B
  f.allocator.deallocate(b);  // waits in the recent slot, beside a
  f.events->complete_all();
  void* other = f.allocator.allocate(100000, kStreamA);  // completes a's free, merges a and b
  f.allocator.deallocate(other);
  f.allocator.deallocate(c);
  EXPECT_EQ(blocks_in_segments(f.allocator), 1u);  // everything merged back into one block
  EXPECT_EQ(f.allocator.stats().inactive_split[0].current, 0);
  void* whole = f.allocator.allocate(3 * 4096, kStreamA);
  EXPECT_EQ(whole, a);
  f.allocator.deallocate(whole);
}

// Several sizes freed in turn wait side by side (Note [Recently freed blocks]): each comes back
// to the next request of its size, neighbours among them merge when one is returned to the index,
// and nothing is left unmerged once everything is free.
TEST_P(CachingAllocatorModes, SeveralRecentFreesAreReusedAndMergeWithEachOther) {
  Fixture f(config());
  constexpr std::size_t kSizes[] = {4096, 8192, 16384, 32768, 65536};
  std::vector<void*> first;
  for (std::size_t bytes : kSizes) first.push_back(f.allocator.allocate(bytes, kStreamA));
  for (int round = 0; round < 3; ++round) {
    // The last four freed wait in the slots; each request of their sizes takes its own block back.
    for (std::size_t i = 1; i < std::size(kSizes); ++i) f.allocator.deallocate(first[i]);
    for (std::size_t i = 1; i < std::size(kSizes); ++i) {
      EXPECT_EQ(f.allocator.allocate(kSizes[i], kStreamA), first[i]) << "round " << round << ", size " << kSizes[i];
    }
  }
  for (void* p : first) f.allocator.deallocate(p);  // the fifth free pushes the oldest into the index
  EXPECT_EQ(blocks_in_segments(f.allocator), 1u);  // neighbours in the slots merged with each other
  EXPECT_EQ(f.allocator.stats().inactive_split[0].current, 0);
  void* whole = f.allocator.allocate(4096 + 8192 + 16384 + 32768 + 65536, kStreamA);
  EXPECT_EQ(whole, first[0]);
  f.allocator.deallocate(whole);
  EXPECT_EQ(f.allocator.stats().allocated_bytes[0].current, 0);
}

// The GPU tier's cross-stream sequence, with events the test completes by hand.
TEST_P(CachingAllocatorModes, CrossStreamReuseSequence) {
  Fixture f(config(), 8ull << 30, /*auto_events=*/false);
  void* buffer = f.allocator.allocate(8 * MiB, kStreamA);
  f.allocator.record_stream(buffer, kStreamB);
  f.allocator.deallocate(buffer);
  void* next = f.allocator.allocate(8 * MiB, kStreamA);
  EXPECT_NE(next, buffer);
  f.events->complete_all();
  f.allocator.process_events();
  void* reused = f.allocator.allocate(8 * MiB, kStreamA);
  EXPECT_EQ(reused, buffer);
  f.allocator.deallocate(next);
  f.allocator.deallocate(reused);
  f.allocator.empty_cache();
  EXPECT_EQ(f.provider->in_use(), 0u);
}

TEST_P(CachingAllocatorModes, EmptyCacheReturnsEverythingFree) {
  Fixture f(config());
  std::vector<void*> ps;
  for (int i = 0; i < 20; ++i) ps.push_back(f.allocator.allocate((i + 1) * 700 * 1024, kStreamA));
  for (void* p : ps) f.allocator.deallocate(p);
  EXPECT_GT(f.provider->in_use(), 0u);
  f.allocator.empty_cache();
  EXPECT_EQ(f.provider->in_use(), 0u);
  const MemoryStats m = f.allocator.stats();
  EXPECT_EQ(m.reserved_bytes[0].current, 0);
  EXPECT_EQ(m.segment[0].current, 0);
  EXPECT_EQ(m.num_device_alloc, static_cast<std::int64_t>(f.provider->acquire_calls()));
  EXPECT_EQ(m.num_device_free, static_cast<std::int64_t>(f.provider->release_calls()));
}

TEST_P(CachingAllocatorModes, OutOfMemoryReportsAndRecovers) {
  AllocatorConfig c = config();
  Fixture f(c, 256 * MiB);
  f.allocator.set_memory_fraction(0.5);  // 128 MiB
  void* keep = f.allocator.allocate(60 * MiB, kStreamA);
  void* cached = f.allocator.allocate(40 * MiB, kStreamB);
  f.allocator.deallocate(cached);  // cached on stream B: freed by the retry
  try {
    (void)f.allocator.allocate(100 * MiB, kStreamA);
    FAIL() << "no OOM";
  } catch (const OutOfMemoryError& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.requested_bytes(), 100 * MiB);
    EXPECT_NE(what.find("CUDA out of memory. Tried to allocate 100.00 MiB. GPU 0 has a total capacity of 256.00 MiB"), std::string::npos) << what;
    EXPECT_NE(what.find("60.00 MiB allocated"), std::string::npos) << what;
    EXPECT_NE(what.find("fraction 0.5"), std::string::npos) << what;
    EXPECT_NE(what.find("largest free block"), std::string::npos) << what;
  }
  const MemoryStats m = f.allocator.stats();
  EXPECT_EQ(m.num_ooms, 1);
  EXPECT_EQ(m.num_alloc_retries, 1);
  // The retry returned stream B's cache; the program goes on allocating.
  void* fits = f.allocator.allocate(50 * MiB, kStreamA);
  EXPECT_NE(fits, nullptr);
  f.allocator.deallocate(fits);
  f.allocator.deallocate(keep);
}

// Note [No cache release during capture]: out of memory while the stream captures, the cache
// stays (releasing it would synchronize) and the error says why; after the capture the usual
// free-and-retry recovers.
TEST_P(CachingAllocatorModes, OutOfMemoryDuringCaptureReleasesNothing) {
  // Each stream to its own memory: stream B's cache is then reached only by releasing it.
  AllocatorConfig c = config();
  c.cross_stream_reuse = CrossStreamReuse::off;
  Fixture f(c, 256 * MiB);
  f.allocator.set_memory_fraction(0.5);  // 128 MiB
  void* keep = f.allocator.allocate(60 * MiB, kStreamA);
  void* cached = f.allocator.allocate(40 * MiB, kStreamB);
  f.allocator.deallocate(cached);
  const MemoryStats before = f.allocator.stats();
  f.events->set_capturing(kStreamA, true);
  try {
    (void)f.allocator.allocate(100 * MiB, kStreamA);
    FAIL() << "no OOM";
  } catch (const OutOfMemoryError& e) {
    EXPECT_NE(std::string(e.what()).find("capturing a CUDA graph"), std::string::npos) << e.what();
  }
  MemoryStats m = f.allocator.stats();
  EXPECT_EQ(m.num_device_free, before.num_device_free) << "nothing returned to the driver";
  EXPECT_EQ(m.reserved_bytes[0].current, before.reserved_bytes[0].current);
  EXPECT_EQ(m.num_alloc_retries, 0);
  EXPECT_EQ(m.num_ooms, 1);
  f.events->set_capturing(kStreamA, false);
  void* fits = f.allocator.allocate(50 * MiB, kStreamA);  // releases stream B's cache, retries
  m = f.allocator.stats();
  EXPECT_EQ(m.num_alloc_retries, 1);
  f.allocator.deallocate(fits);
  f.allocator.deallocate(keep);
}

// An out-of-memory observer runs with no lock held, so it can read statistics and take the
// snapshot that shows the failure; what an observer throws is named in the error, which is
// thrown all the same.
TEST_P(CachingAllocatorModes, OutOfMemoryObserversSeeTheFailureAndMayTakeASnapshot) {
  Fixture f(config(), 256 * MiB);
  f.allocator.set_memory_fraction(0.5);  // 128 MiB
  f.allocator.record_history(true);
  void* keep = f.allocator.allocate(60 * MiB, kStreamA);
  std::vector<OutOfMemoryInfo> seen;
  std::vector<std::string> reports;
  MemorySnapshot at_failure;
  std::int64_t ooms_seen = -1;
  (void)f.allocator.attach_oom_observer([&](const OutOfMemoryInfo& info) {
    seen.push_back(info);
    reports.emplace_back(info.report);
    at_failure = f.allocator.snapshot();
    ooms_seen = f.allocator.stats().num_ooms;
  });
  (void)f.allocator.attach_oom_observer([](const OutOfMemoryInfo&) { throw std::runtime_error("disk full"); });
  try {
    (void)f.allocator.allocate(100 * MiB, kStreamA);
    FAIL() << "no OOM";
  } catch (const OutOfMemoryError& e) {
    const std::string what = e.what();
    ASSERT_EQ(reports.size(), 1u);
    EXPECT_NE(what.find(reports[0]), std::string::npos) << "the observer saw the error's report";
    EXPECT_NE(what.find("An out-of-memory observer threw: disk full"), std::string::npos) << what;
    EXPECT_EQ(reports[0].find("disk full"), std::string::npos) << "observers see the report, not each other";
  }
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].device, 0);
  EXPECT_EQ(seen[0].requested_bytes, 100 * MiB);
  EXPECT_EQ(seen[0].stream, kStreamA);
  EXPECT_TRUE(seen[0].pool.is_default());
  EXPECT_EQ(seen[0].allocated_bytes, 60 * MiB);
  EXPECT_GE(seen[0].reserved_bytes, 60 * MiB);
  EXPECT_LE(seen[0].reserved_bytes, 128 * MiB);
  EXPECT_EQ(seen[0].device_total_bytes, 256 * MiB);
  EXPECT_LE(seen[0].device_free_bytes, 256 * MiB - seen[0].reserved_bytes);
  EXPECT_FALSE(seen[0].during_capture);
  EXPECT_EQ(seen[0].private_pools_reserved_bytes, 0u);
  EXPECT_LE(seen[0].largest_free_block, seen[0].reserved_bytes - seen[0].allocated_bytes);
  EXPECT_EQ(ooms_seen, 1);
  ASSERT_FALSE(at_failure.trace.empty());
  EXPECT_EQ(at_failure.trace.back().action, TraceEntry::Action::oom);
  EXPECT_EQ(at_failure.trace.back().size, 100 * MiB);
  void* fits = f.allocator.allocate(50 * MiB, kStreamA);  // the program goes on
  f.allocator.deallocate(fits);
  f.allocator.deallocate(keep);
}

// An observer that allocates and fails does not call itself again; an observer that frees
// memory runs without deadlock; a detached observer is not called.
TEST_P(CachingAllocatorModes, OutOfMemoryObserversMayAllocateFreeAndBeDetached) {
  Fixture f(config(), 256 * MiB);
  f.allocator.set_memory_fraction(0.5);
  void* keep = f.allocator.allocate(60 * MiB, kStreamA);
  int calls = 0;
  const std::uint64_t greedy = f.allocator.attach_oom_observer([&](const OutOfMemoryInfo&) {
    ++calls;
    (void)f.allocator.allocate(200 * MiB, kStreamB);  // fails too, inside the observer
  });
  try {
    (void)f.allocator.allocate(100 * MiB, kStreamA);
    FAIL() << "no OOM";
  } catch (const OutOfMemoryError& e) {
    EXPECT_NE(std::string(e.what()).find("An out-of-memory observer threw: "), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("Tried to allocate 200.00 MiB"), std::string::npos) << e.what();
  }
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(f.allocator.stats().num_ooms, 2);
  f.allocator.detach_oom_observer(greedy);
  bool freed = false;
  (void)f.allocator.attach_oom_observer([&](const OutOfMemoryInfo&) {
    f.allocator.deallocate(keep);
    freed = true;
  });
  EXPECT_THROW((void)f.allocator.allocate(100 * MiB, kStreamA), OutOfMemoryError);
  EXPECT_EQ(calls, 1) << "a detached observer was called";
  EXPECT_TRUE(freed);
  void* after = f.allocator.allocate(100 * MiB, kStreamA);  // fits now that the observer freed
  f.allocator.deallocate(after);
  try {
    f.allocator.detach_oom_observer(greedy);
    FAIL() << "detached twice";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("no out-of-memory observer is attached with id " + std::to_string(greedy)),
              std::string::npos) << e.what();
  }
  EXPECT_THROW((void)f.allocator.attach_oom_observer(OutOfMemoryObserver{}), InvalidArgumentError);
}

TEST_P(CachingAllocatorModes, OutOfMemoryObserversAreToldOfACapture) {
  Fixture f(config(), 256 * MiB);
  f.allocator.set_memory_fraction(0.5);
  std::vector<OutOfMemoryInfo> seen;
  (void)f.allocator.attach_oom_observer([&](const OutOfMemoryInfo& info) { seen.push_back(info); });
  f.events->set_capturing(kStreamA, true);
  EXPECT_THROW((void)f.allocator.allocate(200 * MiB, kStreamA), OutOfMemoryError);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_TRUE(seen[0].during_capture);
  f.events->set_capturing(kStreamA, false);
}

TEST_P(CachingAllocatorModes, UnknownPointersAreClearErrors) {
  Fixture f(config());
  int local = 0;
  EXPECT_THROW(f.allocator.deallocate(&local), InvalidArgumentError);
  void* p = f.allocator.allocate(1024, kStreamA);
  f.allocator.deallocate(p);
  try {
    f.allocator.deallocate(p);  // double free
    FAIL();
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("already freed"), std::string::npos);
  }
  EXPECT_THROW(f.allocator.record_stream(&local, kStreamB), InvalidArgumentError);
  EXPECT_NO_THROW(f.allocator.deallocate(nullptr));
  EXPECT_EQ(f.allocator.allocate(0, kStreamA), nullptr);
}

// Statistics checked against a reference model after every step of a long randomized run, on
// one stream or on several taking turns, each stream's live set growing and shrinking in phases,
// so that the streams peak at different times: every modelled peak is the device's, exact (See
// Note [Device-wide peaks]); with exact_peaks:False, reserved bytes' peak is exact and the
// others are the streams' peaks summed, above the device's.
void check_statistics_against_a_model(const AllocatorConfig& config, int steps, std::vector<StreamKey> streams) {
  Fixture f(config);
  struct Live { std::size_t size, rounded; StreamKey stream; };
  std::map<void*, Live> live;
  std::map<StreamKey, std::size_t> live_on;
  std::map<StreamKey, std::int64_t> allocated_on, peak_on;
  std::mt19937_64 rng(42);
  std::int64_t allocated = 0, requested = 0, peak_allocated = 0, peak_reserved = 0, peak_requested = 0;
  // Per pool (all, small, large): live allocations and their bytes, now and at their peaks.
  std::array<std::int64_t, 3> count{}, bytes{}, peak_count{}, peak_bytes{};
  const auto pool_of = [](std::size_t rounded) { return rounded <= MiB ? 1 : 2; };
  const auto add = [&](std::size_t rounded, int sign) {
    for (int i : {0, pool_of(rounded)}) {
      count[i] += sign;
      bytes[i] += sign * static_cast<std::int64_t>(rounded);
      peak_count[i] = std::max(peak_count[i], count[i]);
      peak_bytes[i] = std::max(peak_bytes[i], bytes[i]);
    }
  };
  const bool exact = config.exact_peaks || streams.size() == 1;
  for (int step = 0; step < steps; ++step) {
    // Phases of 20,000 steps: one stream grows while the others shrink.
    const StreamKey growing = streams[static_cast<std::size_t>(step / 20000) % streams.size()];
    const StreamKey stream = streams[rng() % streams.size()];
    // Between phases the cache is returned, so that reserved memory falls as well as rises.
    if (streams.size() > 1 && step % 20000 == 0) f.allocator.empty_cache();
    const std::size_t cap = streams.size() == 1 || stream == growing ? 400 : 8;
    const bool alloc = live_on[stream] < 8 || (live_on[stream] < cap && rng() % 2 == 0);
    if (alloc) {
      const int shape = static_cast<int>(rng() % 10);
      const std::size_t n = shape < 6 ? 1 + rng() % 8192 : shape < 9 ? 1 + rng() % (4 * MiB) : 1 + rng() % (24 * MiB);
      void* p = f.allocator.allocate(n, stream);
      const std::size_t rounded = f.allocator.allocation_size(p);
      ASSERT_GE(rounded, n);
      ASSERT_EQ(rounded % 512, 0u);
      ASSERT_TRUE(live.emplace(p, Live{n, rounded, stream}).second) << "address handed out twice";
      ++live_on[stream];
      allocated_on[stream] += static_cast<std::int64_t>(rounded);
      peak_on[stream] = std::max(peak_on[stream], allocated_on[stream]);
      allocated += static_cast<std::int64_t>(rounded);
      requested += static_cast<std::int64_t>(n);
      add(rounded, 1);
    } else {
      // A random live block of this stream (the first from a random address on).
      auto it = live.lower_bound(reinterpret_cast<void*>(rng()));
      for (std::size_t seen = 0; seen < live.size() && (it == live.end() || it->second.stream != stream); ++seen) {
        it = it == live.end() ? live.begin() : std::next(it);
      }
      if (it == live.end()) it = live.begin();
      if (it != live.end() && it->second.stream == stream) {
        allocated -= static_cast<std::int64_t>(it->second.rounded);
        requested -= static_cast<std::int64_t>(it->second.size);
        add(it->second.rounded, -1);
        f.allocator.deallocate(it->first);
        --live_on[stream];
        allocated_on[stream] -= static_cast<std::int64_t>(it->second.rounded);
        live.erase(it);
      }
    }
    peak_allocated = std::max(peak_allocated, allocated);
    peak_requested = std::max(peak_requested, requested);
    peak_reserved = std::max(peak_reserved, static_cast<std::int64_t>(f.provider->in_use()));
    if (step % 97 == 0 || step < 2000) {  // stats() walks every shard: sample after warm-up
      const MemoryStats m = f.allocator.stats();
      ASSERT_EQ(m.allocated_bytes[0].current, allocated) << "step " << step;
      ASSERT_EQ(m.requested_bytes[0].current, requested) << "step " << step;
      ASSERT_EQ(m.allocation[0].current, static_cast<std::int64_t>(live.size()));
      ASSERT_EQ(m.reserved_bytes[0].peak, peak_reserved) << "step " << step;
          const auto expect_peak = [&](const char* what, int i, std::int64_t reported, std::int64_t model) {
        if (exact) {
          ASSERT_EQ(reported, model) << what << "[" << i << "].peak, step " << step;
        } else {
          ASSERT_GE(reported, model) << what << "[" << i << "].peak, step " << step;
        }
      };
      for (int i = 0; i < 3; ++i) {
        ASSERT_EQ(m.allocation[i].current, count[i]) << "step " << step;
        ASSERT_EQ(m.allocated_bytes[i].current, bytes[i]) << "step " << step;
        expect_peak("allocation", i, m.allocation[i].peak, peak_count[i]);
        expect_peak("allocated_bytes", i, m.allocated_bytes[i].peak, peak_bytes[i]);
      }
      expect_peak("requested_bytes", 0, m.requested_bytes[0].peak, peak_requested);
      // No record_stream here: active is allocated, lent blocks included (See Note [Lent blocks
      // in the statistics]).
      expect_peak("active_bytes", 0, m.active_bytes[0].peak, peak_allocated);
      ASSERT_EQ(m.allocated_bytes[1].current + m.allocated_bytes[2].current, allocated);
      ASSERT_EQ(m.active_bytes[0].current, allocated) << "step " << step;
      ASSERT_EQ(m.active[0].current, static_cast<std::int64_t>(live.size())) << "step " << step;
      ASSERT_EQ(m.reserved_bytes[0].current, static_cast<std::int64_t>(f.provider->in_use()));
      ASSERT_GE(m.reserved_bytes[0].current, allocated + m.inactive_split_bytes[0].current);
      ASSERT_EQ(m.allocated_bytes[0].allocated - m.allocated_bytes[0].freed, allocated);
    }
    if (step % 997 == 0) {
      // inactive_split counts the free blocks that share their segment with other blocks.
      const MemorySnapshot snap = f.allocator.snapshot();
      std::int64_t split_blocks = 0, split_bytes = 0;
      for (const auto& seg : snap.segments) {
        if (seg.blocks.size() < 2) continue;
        for (const auto& b : seg.blocks) {
          if (b.state != BlockSnapshot::State::inactive) continue;
          ++split_blocks;
          split_bytes += static_cast<std::int64_t>(b.size);
        }
      }
      const MemoryStats& m = snap.stats;
      ASSERT_EQ(m.inactive_split[0].current, split_blocks) << "step " << step;
      ASSERT_EQ(m.inactive_split_bytes[0].current, split_bytes) << "step " << step;
      ASSERT_EQ(m.inactive_split[1].current + m.inactive_split[2].current, split_blocks);
      ASSERT_EQ(m.inactive_split_bytes[1].current + m.inactive_split_bytes[2].current, split_bytes);
      ASSERT_EQ(m.inactive_split_bytes[0].allocated - m.inactive_split_bytes[0].freed, split_bytes);
      ASSERT_GE(m.inactive_split_bytes[0].peak, split_bytes);
    }
  }
  if (streams.size() > 1) {
    // The run is one where summing the streams' own peaks overstates the device's by far.
    std::int64_t sum_of_stream_peaks = 0;
    for (const auto& [stream, peak] : peak_on) sum_of_stream_peaks += peak;
    EXPECT_GT(sum_of_stream_peaks, peak_allocated + peak_allocated / 2);
    // Without the ledger, the shards' peaks summed (lent blocks count on their lenders' shards).
    if (!exact) EXPECT_GT(f.allocator.stats().allocated_bytes[0].peak, peak_allocated);
  }
  for (auto& [p, l] : live) f.allocator.deallocate(p);
  f.allocator.empty_cache();
  EXPECT_EQ(f.provider->in_use(), 0u);
}

TEST_P(CachingAllocatorModes, StatisticsMatchAReferenceModelAtEveryStep) {
  check_statistics_against_a_model(config(), GetParam() ? 1000000 : 400000, {kStreamA});
}

TEST_P(CachingAllocatorModes, StatisticsOfStreamsPeakingInTurnMatchAReferenceModel) {
  check_statistics_against_a_model(config(), 300000, {kStreamA, kStreamB, 0x3000});
}

TEST_P(CachingAllocatorModes, WithoutExactPeaksStreamsPeakingInTurnReportTheirPeaksSummed) {
  AllocatorConfig c = config();
  c.exact_peaks = false;
  check_statistics_against_a_model(c, 100000, {kStreamA, kStreamB, 0x3000});
}

// Several streams, their work finishing at random moments, blocks used on other streams too
// (record_stream), memory passing between streams in each cross_stream_reuse mode: after every
// allocation, no part of the block handed out may still be in use by work of another stream
// that the requesting stream is not ordered after (See Note [Memory across streams]).
void check_no_block_is_handed_out_while_in_use(CrossStreamReuse mode, bool expandable, int steps) {
  AllocatorConfig config;
  config.expandable_segments = expandable;
  config.cross_stream_reuse = mode;
  Fixture f(config, 8ull << 30, /*auto_events=*/false);
  const std::vector<StreamKey> streams{kStreamA, kStreamB, 0x3000, 0x4000};
  struct Live { std::size_t size; StreamKey stream; std::vector<StreamKey> users; };
  std::map<char*, Live> live;
  // A freed block's uses: [begin, end) busy on `stream` until its ticket `until` completes.
  struct Use { char* begin; char* end; StreamKey stream; std::uint64_t until; };
  std::vector<Use> uses;
  std::mt19937_64 rng(7 + static_cast<unsigned>(mode) * 2 + expandable);
  std::int64_t reuses_seen = 0;
  for (int step = 0; step < steps; ++step) {
    const StreamKey stream = streams[rng() % streams.size()];
    const int what = static_cast<int>(rng() % 100);
    if (what < 45 || live.size() < 4) {
      const std::size_t n = rng() % 4 == 0 ? 1 + rng() % (6 * MiB) : 1 + rng() % 65536;
      auto* p = static_cast<char*>(f.allocator.allocate(n, stream));
      const char* end = p + f.allocator.allocation_size(p);
      for (const Use& u : uses) {
        if (u.stream == stream || u.end <= p || u.begin >= end) continue;
        const bool done = f.events->completed_ticket(u.stream) >= u.until;
        const bool ordered = f.events->waited_ticket(stream, u.stream) >= u.until;
        ASSERT_TRUE(done || ordered) << "step " << step << ": " << static_cast<void*>(p) << " handed to stream "
                                     << stream << " while stream " << u.stream << "'s work may use it";
      }
      live.emplace(p, Live{n, stream, {stream}});
    } else if (what < 85) {
      auto it = live.lower_bound(reinterpret_cast<char*>(rng()));
      if (it == live.end()) it = live.begin();
      // The work queued so far on every user is covered by the next ticket recorded there.
      for (StreamKey user : it->second.users) {
        uses.push_back(Use{it->first, it->first + f.allocator.allocation_size(it->first), user,
                           f.events->last_ticket(user) + 1});
      }
      f.allocator.deallocate(it->first);
      live.erase(it);
    } else if (what < 92) {
      auto it = live.lower_bound(reinterpret_cast<char*>(rng()));
      if (it == live.end()) it = live.begin();
      f.allocator.record_stream(it->first, stream);
      it->second.users.push_back(stream);
    } else if (what < 99) {
      f.events->complete_up_to(stream, f.events->last_ticket(stream));  // its work so far finished
    } else {
      f.allocator.process_events();
    }
    if (step % 256 == 0) {
      std::erase_if(uses, [&](const Use& u) { return f.events->completed_ticket(u.stream) >= u.until; });
    }
    reuses_seen = f.allocator.stats().num_cross_stream_reuses;
  }
  if (mode == CrossStreamReuse::off) {
    EXPECT_EQ(reuses_seen, 0);
  } else {
    EXPECT_GT(reuses_seen, steps / 1000) << "the run must exercise memory passing between streams";
  }
  for (auto& [p, l] : live) f.allocator.deallocate(p);
  f.allocator.empty_cache();
  EXPECT_EQ(f.provider->in_use(), 0u);
  EXPECT_EQ(f.allocator.stats().active_bytes[0].current, 0);
}

TEST_P(CachingAllocatorModes, NoBlockIsHandedOutWhileAnotherStreamMayUseIt) {
  for (CrossStreamReuse mode : {CrossStreamReuse::off, CrossStreamReuse::opportunistic, CrossStreamReuse::dependencies}) {
    SCOPED_TRACE(to_string(mode));
    check_no_block_is_handed_out_while_in_use(mode, GetParam(), 60000);
  }
}

// The peaks reached while one stream allocated survive the start of the device's ledger when a
// second stream appears, and peaks after a reset are those since the reset.
TEST_P(CachingAllocatorModes, PeaksCarryOverWhenASecondStreamStartsAllocating) {
  Fixture f(config());
  const auto peak = [&] { return f.allocator.stats().allocated_bytes[0].peak; };
  void* a = f.allocator.allocate(100 * MiB, kStreamA);
  void* small = f.allocator.allocate(1000, kStreamA);
  f.allocator.deallocate(a);
  void* b = f.allocator.allocate(10 * MiB, kStreamB);  // the second shard: the ledger starts
  EXPECT_EQ(peak(), static_cast<std::int64_t>(100 * MiB + 1024));
  EXPECT_EQ(f.allocator.stats().allocation[0].peak, 2);
  EXPECT_EQ(f.allocator.stats().allocation[1].current, 1) << "the small block, carried over";
  f.allocator.deallocate(small);
  a = f.allocator.allocate(50 * MiB, kStreamA);
  EXPECT_EQ(peak(), static_cast<std::int64_t>(100 * MiB + 1024)) << "60 MiB live is no new peak";
  f.allocator.reset_peak_stats();
  EXPECT_EQ(peak(), static_cast<std::int64_t>(60 * MiB));
  f.allocator.deallocate(a);
  void* c = f.allocator.allocate(80 * MiB, kStreamB);  // 90 MiB live on B, none on A
  EXPECT_EQ(peak(), static_cast<std::int64_t>(90 * MiB)) << "the streams' own peaks sum to 140 MiB";
  EXPECT_EQ(f.allocator.stats().allocation[0].peak, 2);
  f.allocator.deallocate(b);
  f.allocator.deallocate(c);
  EXPECT_EQ(f.allocator.stats().allocation[0].current, 0);
}

TEST(CachingAllocatorClassic, SegmentSizesFollowTorch) {
  Fixture f(classic());
  void* small = f.allocator.allocate(1000, kStreamA);
  void* medium = f.allocator.allocate(3 * MiB, kStreamA);
  void* large = f.allocator.allocate(30 * MiB + 1, kStreamA);
  const auto snap = f.allocator.snapshot();
  std::multiset<std::size_t> sizes;
  for (const auto& s : snap.segments) sizes.insert(s.total_size);
  EXPECT_EQ(sizes, (std::multiset<std::size_t>{2 * MiB, 20 * MiB, 32 * MiB}));
  for (void* p : {small, medium, large}) f.allocator.deallocate(p);
}

TEST(CachingAllocatorClassic, MaxSplitSizeKeepsOversizeBlocksWhole) {
  Fixture f(AllocatorConfig::parse("expandable_segments:False,max_split_size_mb:64"));
  void* big = f.allocator.allocate(100 * MiB, kStreamA);
  f.allocator.deallocate(big);
  void* small = f.allocator.allocate(30 * MiB, kStreamA);
  EXPECT_NE(small, big);  // a small request does not split an oversize block
  void* big2 = f.allocator.allocate(90 * MiB, kStreamA);
  EXPECT_EQ(big2, big);   // an oversize request within 20 MiB of it takes it whole
  EXPECT_EQ(f.allocator.allocation_size(big2), 100 * MiB);
  EXPECT_EQ(f.allocator.stats().oversize_allocations.current, 1);
  f.allocator.deallocate(small);
  f.allocator.deallocate(big2);
}

TEST(CachingAllocatorClassic, MaxNonSplitRoundingWidensWhatAnOversizeRequestTakesWhole) {
  for (const bool widened : {false, true}) {
    Fixture f(AllocatorConfig::parse(widened ? "expandable_segments:False,max_split_size_mb:64,max_non_split_rounding_mb:64"
                                             : "expandable_segments:False,max_split_size_mb:64"));
    void* big = f.allocator.allocate(200 * MiB, kStreamA);
    f.allocator.deallocate(big);
    void* smaller = f.allocator.allocate(150 * MiB, kStreamA);  // 50 MiB would be wasted
    EXPECT_EQ(smaller == big, widened) << (widened ? "64 MiB allows it" : "20 MiB forbids it");
    EXPECT_EQ(f.allocator.allocation_size(smaller), widened ? 200 * MiB : 150 * MiB);
    f.allocator.deallocate(smaller);
  }
}

TEST(CachingAllocatorRounding, RoundupDivisionsFollowTorchsRule) {
  Fixture all_four(AllocatorConfig::parse("roundup_power2_divisions:4"));
  // 5 MiB + 1 lies in [4, 8) MiB: steps of 1 MiB.
  void* a = all_four.allocator.allocate(5 * MiB + 1, kStreamA);
  EXPECT_EQ(all_four.allocator.allocation_size(a), 6 * MiB);
  // At or under 512 * 4 bytes nothing but the 512-byte rounding applies.
  void* b = all_four.allocator.allocate(1500, kStreamA);
  EXPECT_EQ(all_four.allocator.allocation_size(b), 1536u);
  // 4600 bytes (4608 after the 512-byte rounding): steps of 1 KiB between 4 and 8 KiB.
  void* c = all_four.allocator.allocate(4600, kStreamA);
  EXPECT_EQ(all_four.allocator.allocation_size(c), 5120u);
  for (void* p : {a, b, c}) all_four.allocator.deallocate(p);

  // Only the first interval (under 2 MiB) rounds, to halves of a power of two.
  Fixture first_only(AllocatorConfig::parse("roundup_power2_divisions:[1:2,>:0]"));
  void* d = first_only.allocator.allocate(1300 * 1024, kStreamA);
  EXPECT_EQ(first_only.allocator.allocation_size(d), 1536u * 1024);
  void* e = first_only.allocator.allocate(5 * MiB + 1, kStreamA);
  EXPECT_EQ(first_only.allocator.allocation_size(e), 5 * MiB + 512);
  for (void* p : {d, e}) first_only.allocator.deallocate(p);
}

TEST(CachingAllocatorHistory, SnapshotRoundTripsThroughJson) {
  Fixture f;
  f.allocator.record_history(true, 1000, [] {
    return std::make_shared<const StackFrames>(StackFrames{{"train_step", "model.cpp", 42}});
  });
  void* a = f.allocator.allocate(3 * MiB, kStreamA);
  void* b = f.allocator.allocate(1000, kStreamA);
  f.allocator.deallocate(b);
  const MemorySnapshot snap = f.allocator.snapshot();
  const MemorySnapshot back = snapshot_from_json(snapshot_to_json(snap));
  ASSERT_EQ(back.segments.size(), snap.segments.size());
  ASSERT_EQ(back.trace.size(), snap.trace.size());
  EXPECT_EQ(back.trace.front().action, TraceEntry::Action::segment_map);
  bool found = false;
  for (const auto& s : back.segments) {
    for (const auto& blk : s.blocks) {
      if (blk.address == reinterpret_cast<std::uintptr_t>(a)) {
        found = true;
        EXPECT_EQ(blk.state, BlockSnapshot::State::active_allocated);
        EXPECT_EQ(blk.requested_size, 3 * MiB);
        ASSERT_TRUE(blk.frames);
        EXPECT_EQ(blk.frames->at(0).name, "train_step");
        EXPECT_EQ(blk.frames->at(0).line, 42);
      }
    }
  }
  EXPECT_TRUE(found);
  // Segments and traces survive a second trip unchanged (stats are not read back).
  const auto first = nlohmann::json::parse(snapshot_to_json(snap));
  const auto second = nlohmann::json::parse(snapshot_to_json(back));
  EXPECT_EQ(first["segments"], second["segments"]);
  EXPECT_EQ(first["device_traces"], second["device_traces"]);
  EXPECT_THROW((void)snapshot_from_json("{\"segments\": 3}"), InvalidArgumentError);
  EXPECT_THROW((void)snapshot_from_json("not json"), InvalidArgumentError);
  f.allocator.deallocate(a);
  EXPECT_NE(f.allocator.summary().find("Allocated memory"), std::string::npos);
}

TEST(CachingAllocatorHistory, CaptureStackNamesTheCaller) {
  const StackFrames frames = capture_stack();
  ASSERT_FALSE(frames.empty());
  // Functions with internal linkage have no dynamic symbol: the frame then names the module and
  // the address; exported ones (gtest's runner here) are demangled.
  bool in_test_binary = false, named_gtest = false;
  for (const auto& fr : frames) {
    in_test_binary |= fr.filename.find("cudakit_host_tests") != std::string::npos;
    named_gtest |= fr.name.find("testing::") != std::string::npos;
  }
  EXPECT_TRUE(in_test_binary);
  EXPECT_TRUE(named_gtest);
}

TEST(AllocTraceParse, RejectsMalformedTraces) {
  EXPECT_THROW((void)parse_alloc_trace("op,id,size,stream\nx,1,2,0\n", "t"), InvalidArgumentError);
  EXPECT_THROW((void)parse_alloc_trace("a,1,2\n", "t"), InvalidArgumentError);
  EXPECT_THROW((void)parse_alloc_trace("f,1,2,0\n", "t"), InvalidArgumentError);
  EXPECT_THROW((void)parse_alloc_trace("a,1,2,0\na,1,2,0\n", "t"), InvalidArgumentError);
  try {
    (void)parse_alloc_trace("op,id,size,stream\na,1,-5,0\n", "mytrace");
    FAIL();
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("mytrace:2: size is not a non-negative integer"), std::string::npos) << e.what();
  }
  const AllocTrace t = parse_alloc_trace("op,id,size,stream\na,7,100,s1\na,9,50,s2\nf,7,100,s1\n", "t");
  EXPECT_EQ(t.ops.size(), 3u);
  EXPECT_EQ(t.num_streams, 2u);
  EXPECT_EQ(t.peak_requested_bytes, 150u);
  EXPECT_EQ(t.ops[2].size, 100u);
}

// A request larger than any device (torch's tests ask for 800,000,000 GiB and for 8 EiB, near
// SIZE_MAX / 2) is refused as out of memory, with its size, and leaves the allocator usable:
// no rounding or accounting may wrap around.
TEST_P(CachingAllocatorModes, AbsurdlyLargeRequestsAreRefusedWithTheirSize) {
  Fixture f(config(), 256 * MiB);
  const std::size_t GiB = 1024 * MiB;
  for (const std::size_t bytes : {std::size_t{GiB * 800000000ull}, std::size_t{GiB * 8000000000ull}, std::numeric_limits<std::size_t>::max() - 1}) {
    try {
      (void)f.allocator.allocate(bytes, kStreamA);
      FAIL() << "no OOM for " << bytes << " bytes";
    } catch (const OutOfMemoryError& e) {
      EXPECT_EQ(e.requested_bytes(), bytes);
      EXPECT_NE(std::string(e.what()).find(bytes > (std::size_t{1} << 60) ? "Tried to allocate more than 1EB memory" : "Tried to allocate 800000000.00 GiB"), std::string::npos) << e.what();
    }
  }
  void* p = f.allocator.allocate(10 * MiB, kStreamA);
  EXPECT_NE(p, nullptr);
  f.allocator.deallocate(p);
  EXPECT_EQ(f.allocator.stats().num_ooms, 3);
}

}  // namespace
}  // namespace cudakit::memory
