// Host tier: the caching allocator's run-time API around its policy — settings changed while it
// runs (set_allocator_settings, large_segment_size_mb), pool options (use_on_oom, no_split),
// history modes (record_memory_history), the nested statistics, and deferred frees whose stream
// the program destroys.

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "cudakit/core/error.hpp"
#include "cudakit/memory/allocator_config.hpp"
#include "cudakit/memory/caching_allocator.hpp"
#include "cudakit/memory/device_allocator.hpp"
#include "cudakit/memory/host_segment_provider.hpp"
#include "cudakit/memory/mem_pool.hpp"
#include "cudakit/memory/memory_history_options.hpp"
#include "cudakit/memory/nested_stats.hpp"
#include "support/expect_refused.hpp"

namespace cudakit::memory {
namespace {

using cudakit::testing::expect_refused;
constexpr std::size_t MiB = 1u << 20;
constexpr StreamKey kStreamA = 0x1000;
constexpr StreamKey kStreamB = 0x2000;

struct Host {
  explicit Host(AllocatorConfig config = classic(), std::size_t capacity = 8ull << 30, bool auto_events = true)
      : provider(std::make_shared<HostSegmentProvider>(capacity)),
        events(std::make_shared<HostStreamEvents>(auto_events)),
        allocator(0, provider, events, config) {}
  static AllocatorConfig classic() {
    AllocatorConfig c;
    c.expandable_segments = false;
    return c;
  }
  std::shared_ptr<HostSegmentProvider> provider;
  std::shared_ptr<HostStreamEvents> events;
  CachingAllocator allocator;
};

std::vector<std::size_t> segment_sizes(const CachingAllocator& a) {
  std::vector<std::size_t> sizes;
  for (const auto& s : a.snapshot(false).segments) sizes.push_back(s.total_size);
  return sizes;
}

// ---- large_segment_size_mb and the size relations -------------------------------------------

// A thread's current pools are kept by device ordinal: one outside the table is refused by name,
// never read or written out of bounds; within it, an exchange gives the pool it replaces.
TEST(CurrentPools, OrdinalsOutsideTheTableAreRefused) {
  for (int device : {-1, 64, 1000}) {
    expect_refused([&] { (void)current_pool(device); }, "out of range 0..63");
    expect_refused([&] { (void)exchange_current_pool(device, PoolId{0, 7}); }, "out of range 0..63");
  }
  const PoolId pool{0, 7};
  EXPECT_EQ(exchange_current_pool(63, pool), PoolId{});
  EXPECT_EQ(current_pool(63), pool);
  EXPECT_EQ(exchange_current_pool(63, PoolId{}), pool);
}

TEST(AllocatorSettings, LargeSegmentSizeIsParsedCheckedAndWrittenBack) {
  const auto c = AllocatorConfig::parse("large_segment_size_mb:64");
  EXPECT_EQ(c.large_segment_size, 64 * MiB);
  EXPECT_EQ(c.max_non_split_rounding, 64 * MiB) << "torch: the rounding follows the segment size";
  EXPECT_EQ(AllocatorConfig::parse(c.to_string()).to_string(), c.to_string());
  EXPECT_NE(c.to_string().find("large_segment_size_mb:64"), std::string::npos);
  EXPECT_EQ(AllocatorConfig::parse("large_segment_size_mb:64,max_non_split_rounding_mb:100").max_non_split_rounding,
            100 * MiB);
  expect_refused([] { (void)AllocatorConfig::parse("large_segment_size_mb:10"); },
                 "'large_segment_size_mb:10': must be greater than 10 (MiB)");
  expect_refused([] { (void)AllocatorConfig::parse("large_segment_size_mb:-64"); }, "must be greater than 10");
  // The relations hold whatever the order of the keys.
  for (const char* text : {"max_split_size_mb:30,large_segment_size_mb:40", "large_segment_size_mb:40,max_split_size_mb:30"}) {
    expect_refused([&] { (void)AllocatorConfig::parse(text); },
                   "'max_split_size_mb:30': must be greater than 40 (MiB), the large-segment size");
  }
  expect_refused([] { (void)AllocatorConfig::parse("large_segment_size_mb:40,max_non_split_rounding_mb:30"); },
                 "'max_non_split_rounding_mb:30': must be at least 40 (MiB)");
  expect_refused([] { (void)AllocatorConfig::parse("max_non_split_rounding_mb:-5"); }, "must not be negative");
}

TEST(AllocatorSettings, MediumRequestsGetSegmentsOfTheLargeSegmentSize) {
  AllocatorConfig c = Host::classic();
  c.large_segment_size = 64 * MiB;
  Host h(c);
  void* p = h.allocator.allocate(2 * MiB, kStreamA);
  EXPECT_EQ(segment_sizes(h.allocator), std::vector<std::size_t>{64 * MiB});
  void* big = h.allocator.allocate(10 * MiB, kStreamB);  // 10 MiB and up: a segment of its own size
  EXPECT_EQ(h.allocator.allocation_size(big), 10 * MiB);
  h.allocator.deallocate(p);
  h.allocator.deallocate(big);
}

// ---- set_allocator_settings ---------------------------------------------------------------

TEST(AllocatorSettings, RunTimeChangesApplyToTheNextRequests) {
  AllocatorConfig config = Host::classic();
  config.cross_stream_reuse = CrossStreamReuse::off;  // stream B's requests get segments of its own
  Host h(config);
  void* a = h.allocator.allocate(2 * MiB, kStreamA);  // a 20 MiB segment
  h.allocator.set_allocator_settings("large_segment_size_mb:32, roundup_power2_divisions:4");
  EXPECT_EQ(h.allocator.config().large_segment_size, 32 * MiB);
  void* b = h.allocator.allocate(2 * MiB, kStreamB);  // a new 32 MiB segment; the old one stays
  auto sizes = segment_sizes(h.allocator);
  std::sort(sizes.begin(), sizes.end());
  EXPECT_EQ(sizes, (std::vector<std::size_t>{20 * MiB, 32 * MiB}));
  // torch's rounding with 4 divisions: 1.1 MiB -> 1.25 MiB.
  void* c = h.allocator.allocate(1100000, kStreamB);
  EXPECT_EQ(h.allocator.allocation_size(c), 1280 * 1024u);
  h.allocator.set_allocator_settings("garbage_collection_threshold:0.5,per_process_memory_fraction:0.25");
  EXPECT_DOUBLE_EQ(h.allocator.config().garbage_collection_threshold, 0.5);
  EXPECT_DOUBLE_EQ(h.allocator.config().per_process_memory_fraction, 0.25);
  EXPECT_EQ(h.allocator.config().large_segment_size, 32 * MiB) << "keys not named keep their value";
  for (void* p : {a, b, c}) h.allocator.deallocate(p);
  h.allocator.empty_cache();
  EXPECT_EQ(h.allocator.stats().reserved_bytes[0].current, 0);
}

TEST(AllocatorSettings, ExpandableSegmentsChangeOnlyNewMemory) {
  AllocatorConfig c;
  c.expandable_segments = true;
  Host h(c);
  void* a = h.allocator.allocate(3 * MiB, kStreamA);
  h.allocator.set_allocator_settings("expandable_segments:False");
  void* b = h.allocator.allocate(30 * MiB, kStreamA);  // the arena's free tail is too small
  bool expandable = false, fixed = false;
  for (const auto& s : h.allocator.snapshot(false).segments) (s.is_expandable ? expandable : fixed) = true;
  EXPECT_TRUE(expandable && fixed) << "the arena keeps serving; new memory comes as segments";
  h.allocator.deallocate(a);
  void* again = h.allocator.allocate(3 * MiB, kStreamA);
  EXPECT_EQ(again, a) << "the arena's free block is still used";
  h.allocator.set_allocator_settings("expandable_segments:True");
  for (void* p : {again, b}) h.allocator.deallocate(p);
  h.allocator.empty_cache();
  EXPECT_EQ(h.allocator.stats().reserved_bytes[0].current, 0);
  EXPECT_EQ(h.provider->in_use(), 0u);
}

TEST(AllocatorSettings, OversizeCountsStayBalancedWhenMaxSplitSizeChanges) {
  AllocatorConfig c = Host::classic();
  c.max_split_size = 64 * MiB;
  Host h(c);
  void* big = h.allocator.allocate(100 * MiB, kStreamA);
  EXPECT_EQ(h.allocator.stats().oversize_allocations.current, 1);
  EXPECT_EQ(h.allocator.stats().oversize_segments.current, 1);
  h.allocator.set_allocator_settings("max_split_size_mb:200");
  EXPECT_EQ(h.allocator.stats().max_split_size, static_cast<std::int64_t>(200 * MiB));
  h.allocator.deallocate(big);
  h.allocator.empty_cache();
  EXPECT_EQ(h.allocator.stats().oversize_allocations.current, 0);
  EXPECT_EQ(h.allocator.stats().oversize_segments.current, 0);
}

TEST(AllocatorSettings, RefusedSettingsChangeNothing) {
  Host h;
  h.allocator.set_allocator_settings("max_split_size_mb:128");
  const std::string before = h.allocator.config().to_string();
  const char* api = "CachingAllocator::set_allocator_settings";
  struct Case {
    const char* text;
    const char* expected;
  };
  for (const Case& c : {
           Case{"bogus_key:1", "'bogus_key:1': unknown key"},
           Case{"pinned_use_cuda_host_register:True", "cannot change at run time"},
           Case{"pinned_num_register_threads:4", "'pinned_num_register_threads:4': cannot change at run time"},
           Case{"backend:cudaMallocAsync", "'backend:cudaMallocAsync': cannot change at run time"},
           Case{"garbage_collection_threshold:2", "'garbage_collection_threshold:2': must lie strictly between"},
           Case{"expandable_segments:perhaps", "expected True or False"},
           // A good key before a bad one: the good one is not applied either.
           Case{"max_split_size_mb:512,roundup_power2_divisions:3", "power of two"},
           Case{"large_segment_size_mb:256", "'max_split_size_mb:128': must be greater than 256"},
       }) {
    SCOPED_TRACE(c.text);
    expect_refused([&] { h.allocator.set_allocator_settings(c.text); }, c.expected);
    expect_refused([&] { h.allocator.set_allocator_settings(c.text); }, api);
    EXPECT_EQ(h.allocator.config().to_string(), before);
  }
  // The process-wide function refuses the same way, before any device is touched.
  expect_refused([] { set_allocator_settings("pinned_num_register_threads:4"); }, "set_allocator_settings");
  expect_refused([] { set_allocator_settings("nope:1"); }, "unknown key");
}

TEST(AllocatorSettings, ConcurrentChangesWhileStreamsAllocate) {
  Host h(AllocatorConfig{});
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (StreamKey stream : {kStreamA, kStreamB, StreamKey{0x3000}}) {
    threads.emplace_back([&, stream] {
      std::vector<void*> live;
      for (int i = 0; !stop.load() || i < 2000; ++i) {
        live.push_back(h.allocator.allocate(512 + (static_cast<std::size_t>(i) * 7919) % (12 * MiB), stream));
        if (live.size() > 8) {
          h.allocator.deallocate(live.front());
          live.erase(live.begin());
        }
      }
      for (void* p : live) h.allocator.deallocate(p);
    });
  }
  const char* settings[] = {"expandable_segments:False,max_split_size_mb:64",
                            "roundup_power2_divisions:[1:2,>:8],large_segment_size_mb:32",
                            "expandable_segments:True,garbage_collection_threshold:0.9",
                            "max_split_size_mb:1000,roundup_power2_divisions:0"};
  for (int i = 0; i < 200; ++i) h.allocator.set_allocator_settings(settings[i % 4]);
  stop = true;
  for (auto& t : threads) t.join();
  const MemoryStats s = h.allocator.stats();
  EXPECT_EQ(s.allocated_bytes[0].current, 0);
  EXPECT_EQ(s.oversize_allocations.current, 0);
  h.allocator.empty_cache();
  EXPECT_EQ(h.allocator.stats().reserved_bytes[0].current, 0);
  EXPECT_EQ(h.allocator.stats().oversize_segments.current, 0);
}

// ---- pool options -------------------------------------------------------------------------

TEST(PoolOptions, NoSplitPoolsGiveEachAllocationAWholeSegment) {
  for (bool expandable : {false, true}) {
    SCOPED_TRACE(expandable);
    AllocatorConfig c;
    c.expandable_segments = expandable;
    Host h(c);
    const PoolId pool = CachingAllocator::new_pool_id();
    h.allocator.create_pool(pool, nullptr, {.no_split = true});
    void* a = h.allocator.allocate(1000, kStreamA, pool);
    void* b = h.allocator.allocate(1000, kStreamA, pool);
    EXPECT_EQ(h.allocator.allocation_size(a), 2 * MiB) << "the small segment, whole";
    void* m = h.allocator.allocate(3 * MiB, kStreamA, pool);
    EXPECT_EQ(h.allocator.allocation_size(m), 20 * MiB) << "the large segment, whole";
    std::size_t segments = 0;
    for (const auto& s : h.allocator.snapshot(false).segments) {
      if (s.pool != pool) continue;
      ++segments;
      EXPECT_FALSE(s.is_expandable);
      EXPECT_EQ(s.blocks.size(), 1u);
    }
    EXPECT_EQ(segments, 3u);
    // The default pool still splits.
    void* d = h.allocator.allocate(1000, kStreamA);
    EXPECT_EQ(h.allocator.allocation_size(d), 1024u);
    for (void* p : {a, b, m, d}) h.allocator.deallocate(p);
  }
}

struct OomPools : ::testing::Test {
  // 64 MiB of "device": a pool caching 40 MiB leaves too little for another 40 MiB.
  Host h{Host::classic(), 64 * MiB};
  PoolId pool = CachingAllocator::new_pool_id();
  void cache_in_pool(PoolOptions options, StreamKey stream) {
    h.allocator.create_pool(pool, nullptr, options);
    h.allocator.deallocate(h.allocator.allocate(40 * MiB, stream, pool));
    ASSERT_EQ(h.allocator.pool_reserved_bytes(pool), 40 * MiB);
  }
};

TEST_F(OomPools, UseOnOomPoolServesTheDefaultPoolBeforeItsCacheIsFreed) {
  cache_in_pool({.use_on_oom = true}, kStreamA);
  void* p = h.allocator.allocate(40 * MiB, kStreamA);
  EXPECT_EQ(h.allocator.pool_allocated_bytes(pool), 40 * MiB) << "the pool's block serves it";
  EXPECT_EQ(h.allocator.stats().num_alloc_retries, 0) << "no cache was freed";
  h.allocator.deallocate(p);
  EXPECT_EQ(h.allocator.pool_allocated_bytes(pool), 0u);
  EXPECT_EQ(h.allocator.pool_reserved_bytes(pool), 40 * MiB) << "the block returns to its pool";
  EXPECT_EQ(h.allocator.pool_reserved_bytes(PoolId{}), 0u);
}

TEST_F(OomPools, WithoutUseOnOomTheCacheIsFreedAndTheRequestRetried) {
  cache_in_pool({}, kStreamA);
  void* p = h.allocator.allocate(40 * MiB, kStreamA);
  EXPECT_EQ(h.allocator.stats().num_alloc_retries, 1);
  EXPECT_EQ(h.allocator.pool_reserved_bytes(pool), 0u);
  h.allocator.deallocate(p);
}

TEST_F(OomPools, UseOnOomPoolServesOnlyItsOwnStreamAndOnlyTheDefaultPool) {
  cache_in_pool({.use_on_oom = true}, kStreamB);
  void* p = h.allocator.allocate(40 * MiB, kStreamA);  // no block of the pool on stream A
  EXPECT_EQ(h.allocator.stats().num_alloc_retries, 1);
  h.allocator.deallocate(p);
  h.allocator.empty_cache();
  const PoolId other = CachingAllocator::new_pool_id();
  h.allocator.create_pool(other);
  h.allocator.deallocate(h.allocator.allocate(40 * MiB, kStreamB, pool));  // cached again, on B
  void* q = h.allocator.allocate(40 * MiB, kStreamB, other);
  EXPECT_EQ(h.allocator.stats().num_alloc_retries, 2) << "a pool's request does not borrow";
  EXPECT_EQ(h.allocator.pool_allocated_bytes(other), 40 * MiB);
  h.allocator.deallocate(q);
}

TEST(PoolOptions, CreatingAnExistingPoolIsRefusedAndKeepsIt) {
  Host h;
  const PoolId pool = CachingAllocator::new_pool_id();
  h.allocator.create_pool(pool, nullptr, {.no_split = true});
  expect_refused([&] { h.allocator.create_pool(pool, nullptr, {.use_on_oom = true}); }, "already exists");
  void* a = h.allocator.allocate(1000, kStreamA, pool);
  EXPECT_EQ(h.allocator.allocation_size(a), 2 * MiB) << "still the no_split pool";
  h.allocator.deallocate(a);
}

// ---- history modes ------------------------------------------------------------------------

struct History : ::testing::Test {
  Host h;
  int captures = 0;
  CachingAllocator::CaptureFrames capture = [this] {
    ++captures;
    return std::make_shared<const StackFrames>(StackFrames{{"frame", "file.cpp", captures}});
  };
  MemorySnapshot alloc_and_free(void** kept) {
    *kept = h.allocator.allocate(4096, kStreamA);
    h.allocator.deallocate(h.allocator.allocate(8192, kStreamA));
    return h.allocator.snapshot();
  }
  static const TraceEntry* find(const MemorySnapshot& s, TraceEntry::Action action) {
    for (const auto& e : s.trace) {
      if (e.action == action) return &e;
    }
    return nullptr;
  }
  static const BlockSnapshot* live_block(const MemorySnapshot& s) {
    for (const auto& seg : s.segments) {
      for (const auto& b : seg.blocks) {
        if (b.state == BlockSnapshot::State::active_allocated) return &b;
      }
    }
    return nullptr;
  }
};

TEST_F(History, StateKeepsLiveBlocksFramesAndNoTrace) {
  h.allocator.record_history({.enabled = MemoryHistoryOptions::Enabled::state}, capture);
  void* kept = nullptr;
  const MemorySnapshot s = alloc_and_free(&kept);
  EXPECT_TRUE(s.trace.empty());
  ASSERT_NE(live_block(s), nullptr);
  ASSERT_TRUE(live_block(s)->frames);
  EXPECT_EQ(live_block(s)->frames->at(0).name, "frame");
  h.allocator.deallocate(kept);
}

TEST_F(History, ContextLevelsSayWhichEventsCarryFrames) {
  using C = MemoryHistoryOptions::Context;
  for (C context : {C::none, C::state, C::alloc, C::all}) {
    SCOPED_TRACE(static_cast<int>(context));
    h.allocator.record_history({.context = context, .clear_history = true}, capture);
    captures = 0;
    void* kept = nullptr;
    const MemorySnapshot s = alloc_and_free(&kept);
    const TraceEntry* alloc = find(s, TraceEntry::Action::alloc);
    const TraceEntry* freed = find(s, TraceEntry::Action::free_requested);
    ASSERT_TRUE(alloc && freed);
    EXPECT_EQ(bool(live_block(s)->frames), context != C::none);
    EXPECT_EQ(bool(alloc->frames), context >= C::alloc);
    EXPECT_EQ(bool(freed->frames), context >= C::alloc);
    if (context == C::alloc) EXPECT_EQ(freed->frames->at(0).line, 2) << "the allocation's frames";
    if (context == C::all) EXPECT_GT(freed->frames->at(0).line, 2) << "the free's own frames";
    h.allocator.deallocate(kept);
  }
}

TEST_F(History, StacksNoneRecordsNoFrames) {
  h.allocator.record_history({.stacks = MemoryHistoryOptions::Stacks::none}, capture);
  void* kept = nullptr;
  const MemorySnapshot s = alloc_and_free(&kept);
  EXPECT_EQ(captures, 0);
  EXPECT_FALSE(s.trace.empty());
  EXPECT_FALSE(live_block(s)->frames);
  h.allocator.deallocate(kept);
}

TEST_F(History, SkipActionsMaxEntriesAndClearHistory) {
  h.allocator.record_history({.skip_actions = {"segment_alloc", "alloc", "snapshot"}}, capture);
  void* kept = nullptr;
  MemorySnapshot s = alloc_and_free(&kept);
  EXPECT_EQ(find(s, TraceEntry::Action::alloc), nullptr);
  EXPECT_EQ(find(s, TraceEntry::Action::segment_alloc), nullptr);
  EXPECT_NE(find(s, TraceEntry::Action::free_requested), nullptr);
  h.allocator.record_history({.max_entries = 2}, capture);
  EXPECT_EQ(h.allocator.snapshot().trace.size(), 2u) << "the last two are kept";
  h.allocator.record_history({.clear_history = true}, capture);
  EXPECT_TRUE(h.allocator.snapshot().trace.empty());
  EXPECT_TRUE(h.allocator.snapshot(/*include_traces=*/false).trace.empty());
  h.allocator.deallocate(h.allocator.allocate(100, kStreamA));
  EXPECT_FALSE(h.allocator.snapshot().trace.empty());
  EXPECT_TRUE(h.allocator.snapshot(/*include_traces=*/false).trace.empty()) << "not copied";
  h.allocator.record_history({.enabled = MemoryHistoryOptions::Enabled::none});
  EXPECT_TRUE(h.allocator.snapshot().trace.empty()) << "stopping forgets the history";
  h.allocator.deallocate(kept);
}

TEST_F(History, UnknownSkipActionIsRefusedAndTheRecordingGoesOn) {
  h.allocator.record_history({.skip_actions = {"alloc"}}, capture);
  expect_refused([&] { h.allocator.record_history({.skip_actions = {"free", "alloc"}}, capture); },
                 "skip_actions entry 'free' is not an action");
  void* kept = nullptr;
  const MemorySnapshot s = alloc_and_free(&kept);
  EXPECT_EQ(find(s, TraceEntry::Action::alloc), nullptr) << "the earlier options still hold";
  EXPECT_NE(find(s, TraceEntry::Action::free_requested), nullptr);
  h.allocator.deallocate(kept);
}

TEST(HistoryOptions, TorchsStringsAndClearErrors) {
  using O = MemoryHistoryOptions;
  EXPECT_EQ(O::parse_enabled(std::nullopt), O::Enabled::none);
  EXPECT_EQ(O::parse_enabled("state"), O::Enabled::state);
  EXPECT_EQ(O::parse_enabled("all"), O::Enabled::all);
  EXPECT_EQ(O::parse_context(std::nullopt), O::Context::none);
  EXPECT_EQ(O::parse_context("alloc"), O::Context::alloc);
  EXPECT_EQ(O::parse_stacks("python"), O::Stacks::cpp);
  EXPECT_EQ(O::parse_stacks("all"), O::Stacks::cpp);
  EXPECT_EQ(O::parse_stacks("none"), O::Stacks::none);
  expect_refused([] { (void)O::parse_enabled("yes"); }, "enabled 'yes' is not one of 'state', 'all' or none");
  expect_refused([] { (void)O::parse_context("free"); }, "context 'free' is not one of");
  expect_refused([] { (void)O::parse_stacks("java"); }, "stacks 'java'");
}

// ---- nested statistics --------------------------------------------------------------------

TEST(NestedStatistics, TorchsTreeAndItsFlatForm) {
  Host h;
  void* p = h.allocator.allocate(3 * MiB, kStreamA);
  const MemoryStats stats = h.allocator.stats();
  const NestedStats tree = stats.to_nested();
  EXPECT_EQ(tree["allocated_bytes"]["all"]["current"].value(), static_cast<std::int64_t>(3 * MiB));
  EXPECT_EQ(tree.at("allocated_bytes.large_pool.peak").value(), static_cast<std::int64_t>(3 * MiB));
  EXPECT_EQ(tree.at("num_alloc_retries").value(), 0);
  EXPECT_TRUE(tree.at("oversize_allocations.freed").is_leaf());
  const auto flat = stats.to_map();
  EXPECT_EQ(flat, tree.flatten());
  // torch's keys: 9 statistics by pool (3 pools x 4 fields), 2 without pools, 6 counters; and
  // cudakit's num_cross_stream_reuses.
  EXPECT_EQ(flat.size(), 9u * 3 * 4 + 2 * 4 + 6 + 1);
  for (const char* key : {"active.large_pool.peak", "inactive_split_bytes.small_pool.freed",
                          "requested_bytes.all.allocated", "oversize_segments.current", "num_ooms",
                          "num_sync_all_streams", "num_device_alloc", "num_device_free", "max_split_size"}) {
    EXPECT_EQ(flat.count(key), 1u) << key;
  }
  EXPECT_EQ(flat.at("segment.large_pool.current"), 1);
  expect_refused([&] { (void)tree.at("allocated_bytes.every.current"); },
                 "'allocated_bytes.every.current': no statistic 'every' in 'allocated_bytes'");
  expect_refused([&] { (void)tree["bogus"]; }, "no statistic named 'bogus'");
  h.allocator.deallocate(p);
}

// ---- deferred frees and destroyed streams -----------------------------------------------

TEST(DeferredFrees, FreeWaitingForADestroyedStreamIsReleasedWhenItsWorkFinished) {
  for (bool expandable : {false, true}) {
    SCOPED_TRACE(expandable);
    AllocatorConfig c;
    c.expandable_segments = expandable;
    Host h(c, 8ull << 30, /*auto_events=*/false);
    void* a = h.allocator.allocate(4096, kStreamA);
    h.allocator.record_stream(a, kStreamB);
    h.events->set_capturing(kStreamB, true);
    h.allocator.deallocate(a);
    EXPECT_EQ(h.events->destroy_watch_holds(), 1) << "a deferred free holds the watch";
    h.events->release(h.events->record(kStreamB));  // work stream B still has queued
    h.events->destroy_stream(kStreamB);  // while the free waits; the capture never "ends"
    void* b = h.allocator.allocate(4096, kStreamA);  // marks what stream B had queued
    EXPECT_NE(b, a);
    EXPECT_EQ(h.events->destroy_watch_holds(), 0);
    EXPECT_EQ(h.events->live_tokens(), 1u);
    h.events->complete_up_to(kStreamB, h.events->last_ticket(kStreamB));
    void* again = h.allocator.allocate(4096, kStreamA);
    EXPECT_EQ(again, a) << "released once the destroyed stream's work finished";
    for (void* p : {b, again}) h.allocator.deallocate(p);
    h.allocator.empty_cache();
    EXPECT_EQ(h.allocator.stats().reserved_bytes[0].current, 0);
    EXPECT_EQ(h.events->live_tokens(), 0u);
  }
}

TEST(DeferredFrees, EmptyCacheReleasesAFreeWaitingForADestroyedStream) {
  Host h(AllocatorConfig{}, 8ull << 30, /*auto_events=*/false);
  void* a = h.allocator.allocate(4096, kStreamA);
  h.allocator.record_stream(a, kStreamB);
  h.events->set_capturing(kStreamB, true);
  h.allocator.deallocate(a);
  h.events->destroy_stream(kStreamB);
  h.allocator.empty_cache();  // waits for the mark, then returns the memory
  EXPECT_EQ(h.allocator.stats().reserved_bytes[0].current, 0);
  EXPECT_EQ(h.allocator.stats().active_bytes[0].current, 0);
  EXPECT_EQ(h.events->destroy_watch_holds(), 0);
}

}  // namespace
}  // namespace cudakit::memory
