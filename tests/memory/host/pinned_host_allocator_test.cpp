// Host tier of the pinned host allocator: the caching policy driven by malloc-backed "pinned"
// memory and events that the tests complete by hand.
#include "cudakit/memory/host/pinned_host_allocator.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "cudakit/core/error.hpp"
#include "cudakit/memory/allocator_config.hpp"
#include "cudakit/memory/host/pinned_memory_provider.hpp"

namespace {

using cudakit::InvalidArgumentError;
using cudakit::OutOfMemoryError;
using cudakit::StreamRef;
using cudakit::memory::PinnedEventHandle;
using cudakit::memory::PinnedEventSource;
using cudakit::memory::PinnedHostAllocator;
using cudakit::memory::PinnedHostStats;
using cudakit::memory::PinnedMemoryProvider;

// Malloc-backed memory with an optional limit on the bytes live at once, to drive the OOM path.
class MallocProvider final : public PinnedMemoryProvider {
 public:
  void* allocate(std::size_t bytes) override {
    std::this_thread::sleep_for(alloc_delay_);
    std::lock_guard lock(mutex_);
    ++calls_;
    if (live_bytes_ + bytes > limit_) return nullptr;
    void* ptr = std::malloc(bytes);
    if (ptr == nullptr) throw std::bad_alloc();
    live_[ptr] = bytes;
    live_bytes_ += bytes;
    return ptr;
  }
  void free(void* ptr) noexcept override {
    std::this_thread::sleep_for(free_delay_);
    std::lock_guard lock(mutex_);
    auto it = live_.find(ptr);
    if (it == live_.end()) {
      ++bad_frees_;
      return;
    }
    live_bytes_ -= it->second;
    live_.erase(it);
    std::free(ptr);
  }
  std::string_view name() const noexcept override { return "malloc"; }

  // How long each call takes (set before the allocator is used from several threads).
  void set_delays(std::chrono::microseconds alloc, std::chrono::microseconds free) {
    alloc_delay_ = alloc;
    free_delay_ = free;
  }
  void set_limit(std::size_t limit) {
    std::lock_guard lock(mutex_);
    limit_ = limit;
  }
  std::size_t live_bytes() const {
    std::lock_guard lock(mutex_);
    return live_bytes_;
  }
  std::size_t live_blocks() const {
    std::lock_guard lock(mutex_);
    return live_.size();
  }
  int calls() const {
    std::lock_guard lock(mutex_);
    return calls_;
  }
  int bad_frees() const {
    std::lock_guard lock(mutex_);
    return bad_frees_;
  }

 private:
  mutable std::mutex mutex_;
  std::unordered_map<void*, std::size_t> live_;
  std::size_t live_bytes_ = 0;
  std::size_t limit_ = SIZE_MAX;
  int calls_ = 0;
  int bad_frees_ = 0;
  std::chrono::microseconds alloc_delay_{0};
  std::chrono::microseconds free_delay_{0};
};

// Events that complete only when the test says so: complete_stream() plays the part of the
// stream running dry (StreamRef::synchronize).
class FakeEventSource final : public PinnedEventSource {
 public:
  PinnedEventHandle create(int device) override {
    std::lock_guard lock(mutex_);
    events_.push_back(Event{device, nullptr, true, false});
    return to_handle(events_.size() - 1);
  }
  void record(PinnedEventHandle handle, StreamRef stream) override {
    std::lock_guard lock(mutex_);
    Event& event = at(handle);
    if (stream.handle() == fail_on_) throw std::runtime_error("fake record failure");
    // The allocator must record an event only on streams of the device it was made for.
    if (event.device != stream.device()) ++device_mismatches_;
    event.stream = stream.handle();
    event.complete = false;
    ++records_;
  }
  bool query(PinnedEventHandle handle) override {
    std::lock_guard lock(mutex_);
    return at(handle).complete;
  }
  void synchronize(PinnedEventHandle handle) override {
    std::lock_guard lock(mutex_);
    at(handle).complete = true;
    ++synchronizes_;
  }
  void destroy(PinnedEventHandle handle) noexcept override {
    std::lock_guard lock(mutex_);
    Event& event = at(handle);
    if (event.destroyed) ++double_destroys_;
    event.destroyed = true;
  }

  void complete_stream(cudaStream_t stream) {
    std::lock_guard lock(mutex_);
    for (Event& event : events_) {
      if (event.stream == stream) event.complete = true;
    }
  }
  void complete_all() {
    std::lock_guard lock(mutex_);
    for (Event& event : events_) event.complete = true;
  }
  void fail_records_on(cudaStream_t stream) {
    std::lock_guard lock(mutex_);
    fail_on_ = stream;
  }
  std::size_t created() const {
    std::lock_guard lock(mutex_);
    return events_.size();
  }
  std::size_t live() const {
    std::lock_guard lock(mutex_);
    std::size_t n = 0;
    for (const Event& event : events_) n += event.destroyed ? 0 : 1;
    return n;
  }
  int records() const {
    std::lock_guard lock(mutex_);
    return records_;
  }
  int synchronizes() const {
    std::lock_guard lock(mutex_);
    return synchronizes_;
  }
  int device_mismatches() const {
    std::lock_guard lock(mutex_);
    return device_mismatches_;
  }
  int double_destroys() const {
    std::lock_guard lock(mutex_);
    return double_destroys_;
  }

 private:
  struct Event {
    int device;
    cudaStream_t stream;
    bool complete;
    bool destroyed;
  };
  static PinnedEventHandle to_handle(std::size_t index) {
    return reinterpret_cast<PinnedEventHandle>(index + 1);
  }
  Event& at(PinnedEventHandle handle) {
    return events_.at(reinterpret_cast<std::uintptr_t>(handle) - 1);
  }

  mutable std::mutex mutex_;
  std::vector<Event> events_;
  cudaStream_t fail_on_ = nullptr;
  int records_ = 0;
  int synchronizes_ = 0;
  int device_mismatches_ = 0;
  int double_destroys_ = 0;
};

// Stream handles the fakes never dereference.
StreamRef fake_stream(std::uintptr_t id, int device = 0) {
  return StreamRef(reinterpret_cast<cudaStream_t>(id), device);
}

std::string pointer_text(const void* ptr) {
  std::ostringstream out;
  out << ptr;
  return out.str();
}

void expect_consistent(const PinnedHostStats& s) {
  EXPECT_EQ(s.reserved_bytes.current, s.allocated_bytes.current + s.pending_bytes + s.cached_bytes);
  EXPECT_GE(s.allocated_bytes.peak, s.allocated_bytes.current);
  EXPECT_GE(s.reserved_bytes.peak, s.reserved_bytes.current);
  EXPECT_GE(s.reserved_bytes.peak, s.allocated_bytes.peak);
  EXPECT_EQ(s.num_allocations, s.num_cache_hits + s.num_host_allocs);
  EXPECT_GE(s.num_host_allocs, s.num_host_frees);
  EXPECT_EQ(s.host_alloc_time.count, s.num_host_allocs);
  EXPECT_EQ(s.host_free_time.count, s.num_host_frees);
}

class PinnedHostAllocatorTest : public ::testing::Test {
 protected:
  PinnedHostAllocatorTest() {
    auto provider = std::make_unique<MallocProvider>();
    auto events = std::make_unique<FakeEventSource>();
    provider_ = provider.get();
    events_ = events.get();
    allocator_ = std::make_unique<PinnedHostAllocator>(std::move(provider), std::move(events));
  }
  ~PinnedHostAllocatorTest() override {
    if (allocator_) expect_consistent(allocator_->stats());
  }

  MallocProvider* provider_;
  FakeEventSource* events_;
  std::unique_ptr<PinnedHostAllocator> allocator_;
};

TEST(PinnedHostAllocator, SizeClassesArePowersOfTwoOfAtLeast512Bytes) {
  EXPECT_EQ(PinnedHostAllocator::size_class(1), 512u);
  EXPECT_EQ(PinnedHostAllocator::size_class(512), 512u);
  EXPECT_EQ(PinnedHostAllocator::size_class(513), 1024u);
  EXPECT_EQ(PinnedHostAllocator::size_class(1024), 1024u);
  EXPECT_EQ(PinnedHostAllocator::size_class(3000), 4096u);
  EXPECT_EQ(PinnedHostAllocator::size_class((std::size_t{1} << 28) + 1), std::size_t{1} << 29);
  EXPECT_EQ(PinnedHostAllocator::size_class(std::size_t{1} << 63), std::size_t{1} << 63);
  EXPECT_THROW((void)PinnedHostAllocator::size_class((std::size_t{1} << 63) + 1),
               OutOfMemoryError);
}

// The provider the config's pinned keys choose; making one touches no CUDA state.
TEST(PinnedMemoryProviders, ConfigKeysChooseTheProvider) {
  using cudakit::memory::AllocatorConfig;
  EXPECT_EQ(cudakit::memory::make_pinned_memory_provider(AllocatorConfig{})->name(), "cudaHostAlloc");
  const auto registered = cudakit::memory::make_pinned_memory_provider(
      AllocatorConfig::parse("pinned_use_cuda_host_register:True,pinned_num_register_threads:4"));
  EXPECT_TRUE(registered->name().starts_with("mmap + cudaHostRegister")) << registered->name();
  EXPECT_THROW((void)cudakit::memory::make_registered_pinned_memory_provider(0), InvalidArgumentError);
}

TEST(PinnedHostAllocator, NullProviderOrEventSourceIsRejected) {
  EXPECT_THROW(PinnedHostAllocator(nullptr, std::make_unique<FakeEventSource>()),
               InvalidArgumentError);
  EXPECT_THROW(PinnedHostAllocator(std::make_unique<MallocProvider>(), nullptr),
               InvalidArgumentError);
}

// torch's host_alloc_time / host_free_time: the provider calls' durations, cache hits excluded.
TEST_F(PinnedHostAllocatorTest, ProviderCallTimesAreCounted) {
  using namespace std::chrono_literals;
  provider_->set_delays(3ms, 1ms);
  void* a = allocator_->allocate(1000);
  void* b = allocator_->allocate(5000);  // another size class: another provider call
  allocator_->deallocate(a);
  void* c = allocator_->allocate(900);   // a's class again: a cache hit, no provider call
  EXPECT_EQ(c, a);
  PinnedHostStats s = allocator_->stats();
  EXPECT_EQ(s.host_alloc_time.count, 2u);
  EXPECT_GE(s.host_alloc_time.min_us, 3000.0);
  EXPECT_GE(s.host_alloc_time.max_us, s.host_alloc_time.min_us);
  EXPECT_DOUBLE_EQ(s.host_alloc_time.average_us(), s.host_alloc_time.total_us / 2);
  EXPECT_GE(s.host_alloc_time.total_us, s.host_alloc_time.min_us + s.host_alloc_time.max_us - 1e-9);
  EXPECT_EQ(s.host_free_time.count, 0u);
  allocator_->deallocate(b);
  allocator_->deallocate(c);
  allocator_->empty_cache();
  s = allocator_->stats();
  EXPECT_EQ(s.host_free_time.count, 2u);
  EXPECT_GE(s.host_free_time.min_us, 1000.0);
  provider_->set_delays(0us, 0us);
}

TEST_F(PinnedHostAllocatorTest, ZeroBytesGiveNullAndNullDeallocateIsANoOp) {
  EXPECT_EQ(allocator_->allocate(0), nullptr);
  allocator_->deallocate(nullptr);
  EXPECT_EQ(provider_->calls(), 0);
  EXPECT_EQ(allocator_->stats().num_allocations, 0u);
}

TEST_F(PinnedHostAllocatorTest, BlocksAreUsableForTheirWholeSizeClass) {
  auto* p = static_cast<unsigned char*>(allocator_->allocate(700));
  ASSERT_NE(p, nullptr);
  std::memset(p, 0xab, 1024);  // ASan would catch a block smaller than its class
  const PinnedHostStats s = allocator_->stats();
  EXPECT_EQ(s.allocated_bytes.current, 1024u);
  EXPECT_EQ(s.reserved_bytes.current, 1024u);
  EXPECT_EQ(provider_->live_bytes(), 1024u);
  allocator_->deallocate(p);
}

TEST_F(PinnedHostAllocatorTest, FreedBlockIsReusedBySameSizeClassOnly) {
  void* a = allocator_->allocate(1000);  // class 1024
  allocator_->deallocate(a);
  void* small = allocator_->allocate(100);  // class 512: must not take the 1024 block
  EXPECT_NE(small, a);
  void* big = allocator_->allocate(1025);  // class 2048: neither
  EXPECT_NE(big, a);
  void* same = allocator_->allocate(600);  // class 1024
  EXPECT_EQ(same, a);
  const PinnedHostStats s = allocator_->stats();
  EXPECT_EQ(s.num_allocations, 4u);
  EXPECT_EQ(s.num_cache_hits, 1u);
  EXPECT_EQ(s.num_host_allocs, 3u);
  EXPECT_EQ(provider_->calls(), 3);
  EXPECT_EQ(s.reserved_bytes.current, 512u + 1024u + 2048u);
  for (void* p : {small, big, same}) allocator_->deallocate(p);
  EXPECT_EQ(allocator_->stats().cached_blocks, 3u);
}

TEST_F(PinnedHostAllocatorTest, MostRecentlyFreedBlockOfAClassIsReusedFirst) {
  void* a = allocator_->allocate(512);
  void* b = allocator_->allocate(512);
  allocator_->deallocate(a);
  allocator_->deallocate(b);
  EXPECT_EQ(allocator_->allocate(512), b);
  EXPECT_EQ(allocator_->allocate(512), a);
  allocator_->deallocate(a);
  allocator_->deallocate(b);
}

TEST_F(PinnedHostAllocatorTest, BlockIsNotReusedWhileItsEventIsPending) {
  const StreamRef s = fake_stream(0x10);
  void* a = allocator_->allocate(4096);
  allocator_->record_stream(a, s);
  allocator_->deallocate(a);
  EXPECT_EQ(events_->records(), 1);
  PinnedHostStats st = allocator_->stats();
  EXPECT_EQ(st.pending_blocks, 1u);
  EXPECT_EQ(st.pending_bytes, 4096u);
  EXPECT_EQ(st.cached_blocks, 0u);
  EXPECT_EQ(st.allocated_bytes.current, 0u);

  void* b = allocator_->allocate(4096);
  EXPECT_NE(b, a);
  EXPECT_EQ(allocator_->process_events(), 0u);
  EXPECT_EQ(allocator_->stats().pending_blocks, 1u);

  events_->complete_stream(s.handle());
  void* c = allocator_->allocate(4096);  // polls the pending list first
  EXPECT_EQ(c, a);
  st = allocator_->stats();
  EXPECT_EQ(st.pending_blocks, 0u);
  EXPECT_EQ(st.num_cache_hits, 1u);
  allocator_->deallocate(b);
  allocator_->deallocate(c);
}

TEST_F(PinnedHostAllocatorTest, ProcessEventsMovesCompletedBlocksToTheCache) {
  const StreamRef s1 = fake_stream(0x10), s2 = fake_stream(0x20);
  void* a = allocator_->allocate(512);
  void* b = allocator_->allocate(512);
  allocator_->record_stream(a, s1);
  allocator_->record_stream(b, s2);
  allocator_->deallocate(a);
  allocator_->deallocate(b);
  EXPECT_EQ(allocator_->stats().pending_blocks, 2u);
  events_->complete_stream(s2.handle());  // out of deallocation order
  EXPECT_EQ(allocator_->process_events(), 1u);
  PinnedHostStats st = allocator_->stats();
  EXPECT_EQ(st.pending_blocks, 1u);
  EXPECT_EQ(st.cached_blocks, 1u);
  EXPECT_EQ(st.cached_bytes, 512u);
  EXPECT_EQ(allocator_->allocate(512), b);
  events_->complete_stream(s1.handle());
  EXPECT_EQ(allocator_->process_events(), 1u);
  EXPECT_EQ(allocator_->allocate(512), a);
  allocator_->deallocate(a);
  allocator_->deallocate(b);
}

TEST_F(PinnedHostAllocatorTest, EveryRecordedStreamMustFinishBeforeReuse) {
  const StreamRef s1 = fake_stream(0x10), s2 = fake_stream(0x20);
  void* a = allocator_->allocate(2048);
  allocator_->record_stream(a, s1);
  allocator_->record_stream(a, s2);
  allocator_->deallocate(a);
  EXPECT_EQ(events_->records(), 2);
  events_->complete_stream(s1.handle());
  EXPECT_EQ(allocator_->process_events(), 0u);
  void* b = allocator_->allocate(2048);
  EXPECT_NE(b, a);
  events_->complete_stream(s2.handle());
  EXPECT_EQ(allocator_->process_events(), 1u);
  EXPECT_EQ(allocator_->allocate(2048), a);
  allocator_->deallocate(a);
  allocator_->deallocate(b);
}

TEST_F(PinnedHostAllocatorTest, RecordStreamTwiceOnOneStreamRecordsOneEvent) {
  const StreamRef s = fake_stream(0x10);
  void* a = allocator_->allocate(512);
  allocator_->record_stream(a, s);
  allocator_->record_stream(static_cast<char*>(a) + 100, s);  // an interior pointer: same block
  allocator_->deallocate(a);
  EXPECT_EQ(events_->records(), 1);
  EXPECT_EQ(allocator_->stats().num_events_recorded, 1u);
}

TEST_F(PinnedHostAllocatorTest, StreamsAreForgottenWhenTheBlockIsReused) {
  const StreamRef s = fake_stream(0x10);
  void* a = allocator_->allocate(512);
  allocator_->record_stream(a, s);
  allocator_->deallocate(a);
  events_->complete_all();
  ASSERT_EQ(allocator_->allocate(512), a);
  allocator_->deallocate(a);  // no record_stream this time: straight to the cache
  EXPECT_EQ(events_->records(), 1);
  EXPECT_EQ(allocator_->stats().cached_blocks, 1u);
}

TEST_F(PinnedHostAllocatorTest, EventsComeFromAPoolAndAreReused) {
  const StreamRef s = fake_stream(0x10);
  for (int i = 0; i < 100; ++i) {
    void* p = allocator_->allocate(512);
    allocator_->record_stream(p, s);
    allocator_->deallocate(p);
    events_->complete_all();
  }
  EXPECT_EQ(events_->created(), 1u);
  EXPECT_EQ(events_->records(), 100);
  EXPECT_EQ(allocator_->stats().num_events_created, 1u);
  EXPECT_EQ(allocator_->stats().num_events_recorded, 100u);
}

TEST_F(PinnedHostAllocatorTest, EventsArePooledPerDevice) {
  const StreamRef on0 = fake_stream(0x10, 0), on1 = fake_stream(0x20, 1);
  for (int i = 0; i < 10; ++i) {
    void* p = allocator_->allocate(512);
    allocator_->record_stream(p, i % 2 == 0 ? on0 : on1);
    allocator_->deallocate(p);
    events_->complete_all();
  }
  void* p = allocator_->allocate(512);
  allocator_->record_stream(p, on0);
  allocator_->record_stream(p, on1);
  allocator_->deallocate(p);
  EXPECT_EQ(events_->created(), 2u);  // one per device
  EXPECT_EQ(events_->device_mismatches(), 0);
}

TEST_F(PinnedHostAllocatorTest, EmptyCacheFreesCachedBlocksButKeepsPendingAndAllocatedOnes) {
  const StreamRef s = fake_stream(0x10);
  void* cached = allocator_->allocate(512);
  void* pending = allocator_->allocate(1024);
  void* held = allocator_->allocate(2048);
  allocator_->deallocate(cached);
  allocator_->record_stream(pending, s);
  allocator_->deallocate(pending);
  allocator_->empty_cache();
  PinnedHostStats st = allocator_->stats();
  EXPECT_EQ(st.cached_blocks, 0u);
  EXPECT_EQ(st.num_host_frees, 1u);
  EXPECT_EQ(st.pending_bytes, 1024u);
  EXPECT_EQ(st.reserved_bytes.current, 1024u + 2048u);
  EXPECT_EQ(provider_->live_bytes(), 1024u + 2048u);
  EXPECT_TRUE(allocator_->owns(held));

  events_->complete_stream(s.handle());
  allocator_->empty_cache();  // polls first: the now-complete pending block goes too
  st = allocator_->stats();
  EXPECT_EQ(st.pending_blocks, 0u);
  EXPECT_EQ(st.reserved_bytes.current, 2048u);
  EXPECT_EQ(provider_->live_bytes(), 2048u);
  allocator_->deallocate(held);
  allocator_->empty_cache();
  EXPECT_EQ(provider_->live_bytes(), 0u);
  EXPECT_EQ(allocator_->stats().reserved_bytes.current, 0u);
  EXPECT_EQ(allocator_->stats().reserved_bytes.peak, 512u + 1024u + 2048u);
  EXPECT_EQ(provider_->bad_frees(), 0);
}

TEST_F(PinnedHostAllocatorTest, OwnsCoversAllocatedBlocksIncludingInteriorPointers) {
  auto* p = static_cast<char*>(allocator_->allocate(1000));
  EXPECT_TRUE(allocator_->owns(p));
  EXPECT_TRUE(allocator_->owns(p + 1023));
  EXPECT_FALSE(allocator_->owns(p + 1024));
  EXPECT_FALSE(allocator_->owns(p - 1));
  int local = 0;
  EXPECT_FALSE(allocator_->owns(&local));
  EXPECT_FALSE(allocator_->owns(nullptr));
  allocator_->deallocate(p);
  EXPECT_FALSE(allocator_->owns(p));  // cached is not owned by the caller any more
}

TEST_F(PinnedHostAllocatorTest, DeallocateOfAnUnknownPointerNamesIt) {
  int local = 0;
  try {
    allocator_->deallocate(&local);
    FAIL() << "expected InvalidArgumentError";
  } catch (const InvalidArgumentError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(pointer_text(&local)), std::string::npos) << what;
    EXPECT_NE(what.find("not allocated"), std::string::npos) << what;
    EXPECT_EQ(e.api(), "PinnedHostAllocator::deallocate");
  }
}

TEST_F(PinnedHostAllocatorTest, DeallocateOfAnInteriorPointerSaysSo) {
  auto* p = static_cast<char*>(allocator_->allocate(1000));
  try {
    allocator_->deallocate(p + 8);
    FAIL() << "expected InvalidArgumentError";
  } catch (const InvalidArgumentError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(pointer_text(p + 8)), std::string::npos) << what;
    EXPECT_NE(what.find("inside"), std::string::npos) << what;
  }
  EXPECT_TRUE(allocator_->owns(p));  // the failed call changed nothing
  allocator_->deallocate(p);
}

TEST_F(PinnedHostAllocatorTest, DoubleDeallocateIsRejected) {
  void* cached = allocator_->allocate(512);
  void* pending = allocator_->allocate(512);
  allocator_->deallocate(cached);
  allocator_->record_stream(pending, fake_stream(0x10));
  allocator_->deallocate(pending);
  for (void* p : {cached, pending}) {
    try {
      allocator_->deallocate(p);
      FAIL() << "expected InvalidArgumentError";
    } catch (const InvalidArgumentError& e) {
      EXPECT_NE(std::string(e.what()).find("already deallocated"), std::string::npos) << e.what();
    }
  }
  const PinnedHostStats st = allocator_->stats();
  EXPECT_EQ(st.cached_blocks, 1u);
  EXPECT_EQ(st.pending_blocks, 1u);
}

TEST_F(PinnedHostAllocatorTest, RecordStreamOfAnUnknownOrFreedPointerNamesIt) {
  int local = 0;
  try {
    allocator_->record_stream(&local, fake_stream(0x10));
    FAIL() << "expected InvalidArgumentError";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find(pointer_text(&local)), std::string::npos) << e.what();
    EXPECT_EQ(e.api(), "PinnedHostAllocator::record_stream");
  }
  void* p = allocator_->allocate(512);
  allocator_->deallocate(p);
  try {
    allocator_->record_stream(p, fake_stream(0x10));
    FAIL() << "expected InvalidArgumentError";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("already deallocated"), std::string::npos) << e.what();
  }
}

TEST_F(PinnedHostAllocatorTest, FailedEventRecordLeavesTheBlockAllocated) {
  const StreamRef good = fake_stream(0x10), bad = fake_stream(0x20);
  void* p = allocator_->allocate(512);
  allocator_->record_stream(p, good);
  allocator_->record_stream(p, bad);
  events_->fail_records_on(bad.handle());
  EXPECT_THROW(allocator_->deallocate(p), std::runtime_error);
  EXPECT_TRUE(allocator_->owns(p));
  PinnedHostStats st = allocator_->stats();
  EXPECT_EQ(st.allocated_blocks, 1u);
  EXPECT_EQ(st.pending_blocks, 0u);
  EXPECT_EQ(st.num_events_recorded, 0u);

  events_->fail_records_on(nullptr);
  allocator_->deallocate(p);  // the retry succeeds, reusing the events the failure returned
  st = allocator_->stats();
  EXPECT_EQ(st.pending_blocks, 1u);
  EXPECT_EQ(st.num_events_created, 2u);
}

TEST_F(PinnedHostAllocatorTest, FailedProviderCallIsRetriedAfterFreeingTheCache) {
  provider_->set_limit(8192);
  void* a = allocator_->allocate(4096);
  void* b = allocator_->allocate(2048);
  allocator_->deallocate(b);  // 2048 cached
  // 4096 + 2048 + 4096 > 8192: the first call fails, the cache is freed, the retry succeeds.
  void* c = allocator_->allocate(4000);
  ASSERT_NE(c, nullptr);
  const PinnedHostStats st = allocator_->stats();
  EXPECT_EQ(st.cached_bytes, 0u);
  EXPECT_EQ(st.num_host_frees, 1u);
  EXPECT_EQ(st.num_ooms, 0u);
  EXPECT_EQ(st.reserved_bytes.current, 8192u);
  EXPECT_EQ(provider_->live_bytes(), 8192u);
  allocator_->deallocate(a);
  allocator_->deallocate(c);
}

TEST_F(PinnedHostAllocatorTest, OutOfMemoryNamesRequestedAndCachedBytesAndTheAllocatorRecovers) {
  provider_->set_limit(8192);
  void* held = allocator_->allocate(4096);
  void* cached = allocator_->allocate(1024);
  allocator_->deallocate(cached);
  try {
    (void)allocator_->allocate(5000);  // class 8192: cannot fit even with the cache freed
    FAIL() << "expected OutOfMemoryError";
  } catch (const OutOfMemoryError& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.requested_bytes(), 5000u);
    EXPECT_NE(what.find("5000 bytes"), std::string::npos) << what;
    EXPECT_NE(what.find("8192"), std::string::npos) << what;
    EXPECT_NE(what.find("1024 cached bytes"), std::string::npos) << what;
    EXPECT_NE(what.find("4096 bytes allocated"), std::string::npos) << what;
    EXPECT_NE(what.find("malloc"), std::string::npos) << what;
  }
  EXPECT_EQ(provider_->calls(), 4);  // 2 successes, then the failure and its one retry
  PinnedHostStats st = allocator_->stats();
  EXPECT_EQ(st.num_ooms, 1u);
  EXPECT_EQ(st.cached_bytes, 0u);
  EXPECT_EQ(st.allocated_bytes.current, 4096u);
  // An OutOfMemoryError is also a std::bad_alloc, and the allocator goes on working.
  EXPECT_THROW((void)allocator_->allocate(5000), std::bad_alloc);
  void* fits = allocator_->allocate(4096);
  EXPECT_NE(fits, nullptr);
  allocator_->deallocate(fits);
  allocator_->deallocate(held);
}

TEST_F(PinnedHostAllocatorTest, RequestsBeyondTheLargestSizeClassFailWithoutCallingTheProvider) {
  EXPECT_THROW((void)allocator_->allocate(SIZE_MAX), OutOfMemoryError);
  EXPECT_EQ(provider_->calls(), 0);
}

TEST_F(PinnedHostAllocatorTest, ResetPeakStatsSetsPeaksToCurrent) {
  void* a = allocator_->allocate(4096);
  void* b = allocator_->allocate(4096);
  allocator_->deallocate(b);
  allocator_->empty_cache();
  EXPECT_EQ(allocator_->stats().allocated_bytes.peak, 8192u);
  allocator_->reset_peak_stats();
  const PinnedHostStats st = allocator_->stats();
  EXPECT_EQ(st.allocated_bytes.peak, 4096u);
  EXPECT_EQ(st.reserved_bytes.peak, 4096u);
  allocator_->deallocate(a);
}

TEST_F(PinnedHostAllocatorTest, ResetAccumulatedStatsZeroesCountersAndKeepsWhatIsHeld) {
  void* a = allocator_->allocate(4096);
  void* b = allocator_->allocate(4096);
  allocator_->deallocate(b);
  void* c = allocator_->allocate(4096);  // b's block again: a cache hit
  PinnedHostStats before = allocator_->stats();
  ASSERT_EQ(before.num_allocations, 3u);
  ASSERT_EQ(before.num_cache_hits, 1u);
  ASSERT_EQ(before.host_alloc_time.count, 2u);
  allocator_->reset_accumulated_stats();
  const PinnedHostStats after = allocator_->stats();
  EXPECT_EQ(after.num_allocations, 0u);
  EXPECT_EQ(after.num_cache_hits, 0u);
  EXPECT_EQ(after.num_host_allocs, 0u);
  EXPECT_EQ(after.host_alloc_time.count, 0u);
  EXPECT_EQ(after.host_alloc_time.total_us, 0.0);
  EXPECT_EQ(after.allocated_bytes.current, before.allocated_bytes.current);
  EXPECT_EQ(after.allocated_bytes.peak, before.allocated_bytes.peak);
  EXPECT_EQ(after.allocated_blocks, 2u);
  void* d = allocator_->allocate(100);  // counting starts again
  EXPECT_EQ(allocator_->stats().num_allocations, 1u);
  allocator_->deallocate(a);
  allocator_->deallocate(c);
  allocator_->deallocate(d);
}

// What the fakes saw by the time the allocator's members are destroyed. The event source is
// destroyed after the destructor body and before the provider (members go in reverse order), so
// its destructor sees every call the allocator's destructor made.
struct Observed {
  int synchronizes = -1;
  std::size_t live_events = 0;
  std::size_t live_blocks = 0;
  int bad_frees = 0;
  int double_destroys = 0;
};

class SpyEventSource final : public PinnedEventSource {
 public:
  SpyEventSource(const MallocProvider* memory, Observed* observed)
      : memory_(memory), observed_(observed) {}
  ~SpyEventSource() override {
    *observed_ = {inner_.synchronizes(), inner_.live(), memory_->live_blocks(),
                  memory_->bad_frees(), inner_.double_destroys()};
  }
  PinnedEventHandle create(int device) override { return inner_.create(device); }
  void record(PinnedEventHandle e, StreamRef s) override { inner_.record(e, s); }
  bool query(PinnedEventHandle e) override { return inner_.query(e); }
  void synchronize(PinnedEventHandle e) override { inner_.synchronize(e); }
  void destroy(PinnedEventHandle e) noexcept override { inner_.destroy(e); }
  FakeEventSource& inner() { return inner_; }

 private:
  FakeEventSource inner_;
  const MallocProvider* memory_;
  Observed* observed_;
};

TEST(PinnedHostAllocator, DestructorWaitsForPendingBlocksAndFreesEverything) {
  Observed observed;
  auto provider = std::make_unique<MallocProvider>();
  auto spy = std::make_unique<SpyEventSource>(provider.get(), &observed);
  SpyEventSource* events = spy.get();
  auto allocator = std::make_unique<PinnedHostAllocator>(std::move(provider), std::move(spy));
  (void)allocator->allocate(512);  // still held by the caller at destruction
  void* pending = allocator->allocate(1024);
  allocator->record_stream(pending, fake_stream(0x10));
  allocator->deallocate(pending);
  void* cached = allocator->allocate(2048);
  allocator->deallocate(cached);
  void* done = allocator->allocate(4096);
  allocator->record_stream(done, fake_stream(0x20));
  allocator->deallocate(done);
  events->inner().complete_stream(reinterpret_cast<cudaStream_t>(0x20));
  EXPECT_EQ(allocator->process_events(), 1u);  // its event is back in the pool
  EXPECT_EQ(events->inner().live(), 2u);

  allocator.reset();
  EXPECT_EQ(observed.synchronizes, 1);  // only the still-pending event is waited for
  EXPECT_EQ(observed.live_events, 0u);  // the pending one and the pooled one are destroyed
  EXPECT_EQ(observed.double_destroys, 0);
  EXPECT_EQ(observed.live_blocks, 0u);  // held, pending and cached blocks are all freed
  EXPECT_EQ(observed.bad_frees, 0);
}

// A randomized run checked after every step against a model of which block is in which state.
TEST_F(PinnedHostAllocatorTest, RandomizedRunKeepsStatsConsistentWithAModel) {
  std::mt19937_64 rng(12345);
  struct Live {
    std::size_t size;
    bool recorded;
  };
  std::map<void*, Live> live;
  std::size_t model_allocated = 0;
  const StreamRef streams[] = {fake_stream(0x10), fake_stream(0x20), fake_stream(0x30, 1)};
  for (int step = 0; step < 20000; ++step) {
    const auto op = rng() % 10;
    if (op < 4 || live.empty()) {
      const std::size_t bytes = 1 + rng() % 20000;
      void* p = allocator_->allocate(bytes);
      ASSERT_NE(p, nullptr);
      ASSERT_EQ(live.count(p), 0u) << "block handed out twice";
      live[p] = Live{PinnedHostAllocator::size_class(bytes), false};
      model_allocated += live[p].size;
      static_cast<unsigned char*>(p)[bytes - 1] = 1;
    } else if (op < 6) {
      auto it = std::next(live.begin(), static_cast<long>(rng() % live.size()));
      allocator_->record_stream(it->first, streams[rng() % 3]);
      it->second.recorded = true;
    } else if (op < 9) {
      auto it = std::next(live.begin(), static_cast<long>(rng() % live.size()));
      model_allocated -= it->second.size;
      allocator_->deallocate(it->first);
      live.erase(it);
    } else if (rng() % 4 == 0) {
      events_->complete_stream(streams[rng() % 3].handle());
    } else if (rng() % 50 == 0) {
      allocator_->empty_cache();
    }
    const PinnedHostStats st = allocator_->stats();
    ASSERT_EQ(st.allocated_bytes.current, model_allocated);
    ASSERT_EQ(st.allocated_blocks, live.size());
    ASSERT_EQ(st.reserved_bytes.current,
              st.allocated_bytes.current + st.pending_bytes + st.cached_bytes);
    ASSERT_EQ(st.reserved_bytes.current, provider_->live_bytes());
    ASSERT_EQ(st.allocated_blocks + st.pending_blocks + st.cached_blocks,
              provider_->live_blocks());
    ASSERT_EQ(st.num_allocations, st.num_cache_hits + st.num_host_allocs);
    ASSERT_EQ(st.num_host_allocs - st.num_host_frees, provider_->live_blocks());
    ASSERT_GE(st.reserved_bytes.peak, st.reserved_bytes.current);
    ASSERT_GE(st.allocated_bytes.peak, st.allocated_bytes.current);
  }
  for (auto& [p, l] : live) allocator_->deallocate(p);
  events_->complete_all();
  allocator_->empty_cache();
  EXPECT_EQ(provider_->live_bytes(), 0u);
  EXPECT_EQ(events_->device_mismatches(), 0);
}

// Several threads allocate, write, record, free and complete events at once; no block may ever
// be handed to two owners at a time. Runs under ThreadSanitizer in CI.
TEST(PinnedHostAllocatorThreads, ManyThreadsAllocateRecordAndFreeAtOnce) {
  auto provider = std::make_unique<MallocProvider>();
  auto events = std::make_unique<FakeEventSource>();
  MallocProvider* memory = provider.get();
  FakeEventSource* fake = events.get();
  PinnedHostAllocator allocator(std::move(provider), std::move(events));

  constexpr int kThreads = 8;
  constexpr int kIterations = 3000;
  std::atomic<bool> stop{false};
  std::atomic<int> corruptions{0};
  std::thread completer([&] {
    while (!stop.load(std::memory_order_relaxed)) {
      fake->complete_all();
      (void)allocator.process_events();
      std::this_thread::yield();
    }
  });
  std::vector<std::thread> workers;
  for (int t = 0; t < kThreads; ++t) {
    workers.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(t));
      const StreamRef stream = fake_stream(0x100 + static_cast<std::uintptr_t>(t), t % 2);
      std::vector<std::pair<unsigned char*, std::size_t>> held;
      for (int i = 0; i < kIterations; ++i) {
        if (held.size() < 4 && rng() % 2 == 0) {
          const std::size_t bytes = 1 + rng() % 8192;
          auto* p = static_cast<unsigned char*>(allocator.allocate(bytes));
          // Stamp the whole request with this thread's tag; a block shared by two owners
          // shows up as a foreign tag when it is checked before the free.
          std::memset(p, t + 1, bytes);
          if (rng() % 2 == 0) allocator.record_stream(p + bytes / 2, stream);
          held.emplace_back(p, bytes);
        } else if (!held.empty()) {
          auto [p, bytes] = held.back();
          held.pop_back();
          for (std::size_t k = 0; k < bytes; ++k) {
            if (p[k] != t + 1) {
              ++corruptions;
              break;
            }
          }
          allocator.deallocate(p);
        }
        if (i % 500 == 0) allocator.empty_cache();
        if (i % 97 == 0) (void)allocator.stats();
      }
      for (auto [p, bytes] : held) allocator.deallocate(p);
    });
  }
  for (std::thread& w : workers) w.join();
  stop = true;
  completer.join();
  EXPECT_EQ(corruptions.load(), 0);
  fake->complete_all();
  allocator.empty_cache();
  const PinnedHostStats st = allocator.stats();
  EXPECT_EQ(st.allocated_bytes.current, 0u);
  EXPECT_EQ(st.pending_blocks, 0u);
  EXPECT_EQ(st.reserved_bytes.current, 0u);
  EXPECT_EQ(st.num_allocations, st.num_cache_hits + st.num_host_allocs);
  EXPECT_EQ(memory->live_bytes(), 0u);
  EXPECT_EQ(fake->device_mismatches(), 0);
}

}  // namespace
