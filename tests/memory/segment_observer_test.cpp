// Host tier: segment observers (CachingAllocator::attach_segment_observer) see every range the
// allocator obtains from its provider after it is backed, and every range it returns before it
// is returned, classic segments whole and expandable ranges chunk by chunk; attach replays what
// exists; detach stops the calls.

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "cudakit/core/error.hpp"
#include "cudakit/memory/caching_allocator.hpp"
#include "cudakit/memory/host_segment_provider.hpp"

namespace cudakit::memory {
namespace {

constexpr std::size_t MiB = 1u << 20;
constexpr StreamKey kStream = 0x1000;

// The host provider, keeping the ranges it has handed out and not yet taken back.
class RecordingProvider : public HostSegmentProvider {
 public:
  RecordingProvider() : HostSegmentProvider(8ull << 30) {}
  void* allocate_segment(std::size_t bytes, StreamKey stream) override {
    void* p = HostSegmentProvider::allocate_segment(bytes, stream);
    if (p) add(p, bytes);
    return p;
  }
  void free_segment(void* ptr, std::size_t bytes, StreamKey stream) noexcept override {
    remove(ptr);
    HostSegmentProvider::free_segment(ptr, bytes, stream);
  }
  bool map(void* addr, std::size_t bytes) override {
    const bool mapped = HostSegmentProvider::map(addr, bytes);
    if (mapped) add(addr, bytes);
    return mapped;
  }
  void unmap(void* addr, std::size_t bytes) noexcept override {
    remove(addr);
    HostSegmentProvider::unmap(addr, bytes);
  }
  // The live range that starts at `base`: its bytes, 0 if none.
  std::size_t live(void* base) const {
    std::lock_guard lock(mutex_);
    const auto it = live_.find(base);
    return it == live_.end() ? 0 : it->second;
  }
  std::map<void*, std::size_t> all_live() const {
    std::lock_guard lock(mutex_);
    return live_;
  }

 private:
  void add(void* p, std::size_t bytes) {
    std::lock_guard lock(mutex_);
    live_[p] = bytes;
  }
  void remove(void* p) {
    std::lock_guard lock(mutex_);
    live_.erase(p);
  }
  mutable std::mutex mutex_;
  std::map<void*, std::size_t> live_;
};

struct Seen {
  SegmentEvent event;
  std::size_t live_bytes;  // what the provider had at that base when the observer was called
};

class SegmentObservers : public ::testing::TestWithParam<bool> {
 protected:
  SegmentObservers()
      : provider_(std::make_shared<RecordingProvider>()),
        allocator_(3, provider_, std::make_shared<HostStreamEvents>(true), config()) {}
  static AllocatorConfig config() {
    AllocatorConfig c;
    c.expandable_segments = GetParam();
    return c;
  }
  std::uint64_t attach() {
    return allocator_.attach_segment_observer([this](const SegmentEvent& e) {
      seen_.push_back({e, provider_->live(e.base)});
    });
  }
  std::vector<Seen> of_kind(SegmentEvent::Kind kind) const {
    std::vector<Seen> out;
    for (const Seen& s : seen_)
      if (s.event.kind == kind) out.push_back(s);
    return out;
  }

  std::shared_ptr<RecordingProvider> provider_;
  CachingAllocator allocator_;
  std::vector<Seen> seen_;
};
INSTANTIATE_TEST_SUITE_P(Expandable, SegmentObservers, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "expandable" : "classic"; });

TEST_P(SegmentObservers, AttachReportsWhatIsMappedThenEveryMapAndUnmapAsItHappens) {
  void* before = allocator_.allocate(3 * MiB, kStream);
  attach();
  // The replay: exactly the provider's live ranges, each reported mapped.
  const auto live_at_attach = provider_->all_live();
  ASSERT_EQ(seen_.size(), live_at_attach.size());
  for (const Seen& s : seen_) {
    EXPECT_EQ(s.event.kind, SegmentEvent::Kind::mapped);
    EXPECT_EQ(s.live_bytes, s.event.bytes) << "replayed range " << s.event.base << " is the provider's";
    EXPECT_EQ(s.event.device, 3);
    EXPECT_EQ(s.event.expandable, GetParam());
  }
  seen_.clear();

  // New memory: mapped after the provider backed it (the provider already has the range).
  void* big = allocator_.allocate(64 * MiB, kStream);
  const auto mapped = of_kind(SegmentEvent::Kind::mapped);
  ASSERT_FALSE(mapped.empty());
  for (const Seen& s : mapped) {
    EXPECT_EQ(s.live_bytes, s.event.bytes) << "reported before the provider backed it";
    EXPECT_EQ(s.event.stream, kStream);
  }
  std::size_t mapped_bytes = 0;
  for (const Seen& s : mapped) mapped_bytes += s.event.bytes;
  EXPECT_GE(mapped_bytes, 64 * MiB);

  // Returned memory: unmapping reported while the provider still has it, each range exactly as
  // it was reported mapped.
  allocator_.deallocate(big);
  allocator_.deallocate(before);
  seen_.clear();
  allocator_.empty_cache();
  const auto unmapping = of_kind(SegmentEvent::Kind::unmapping);
  EXPECT_EQ(unmapping.size(), live_at_attach.size() + mapped.size());
  for (const Seen& s : unmapping)
    EXPECT_EQ(s.live_bytes, s.event.bytes) << "reported after the provider took " << s.event.base << " back";
  EXPECT_TRUE(provider_->all_live().empty());
  EXPECT_TRUE(of_kind(SegmentEvent::Kind::mapped).empty());
}

TEST_P(SegmentObservers, ADetachedObserverIsNeverCalledAgain) {
  const std::uint64_t id = attach();
  void* p = allocator_.allocate(8 * MiB, kStream);
  EXPECT_FALSE(seen_.empty());
  allocator_.detach_segment_observer(id);
  seen_.clear();
  allocator_.deallocate(p);
  allocator_.empty_cache();
  void* q = allocator_.allocate(8 * MiB, kStream);
  EXPECT_TRUE(seen_.empty());
  allocator_.deallocate(q);
  EXPECT_THROW(allocator_.detach_segment_observer(id), InvalidArgumentError);
  EXPECT_THROW(allocator_.attach_segment_observer({}), InvalidArgumentError);
}

TEST_P(SegmentObservers, AnObserverThatThrowsDoesNotStopTheAllocator) {
  allocator_.attach_segment_observer([](const SegmentEvent&) { throw std::runtime_error("observer failure"); });
  attach();
  void* p = allocator_.allocate(4 * MiB, kStream);
  allocator_.deallocate(p);
  allocator_.empty_cache();
  EXPECT_FALSE(of_kind(SegmentEvent::Kind::mapped).empty()) << "the next observer is still called";
  EXPECT_FALSE(of_kind(SegmentEvent::Kind::unmapping).empty());
  EXPECT_TRUE(provider_->all_live().empty()) << "memory is returned all the same";
}

// The observers are kept in core's ListenerSet (Note [Listener snapshots]): a detach on another
// thread returns only once no call to the observer is in flight, and no call starts after it.
TEST_P(SegmentObservers, DetachWaitsForCallsInFlightOnOtherThreads) {
  std::atomic<bool> detached{false};
  std::atomic<int> late_calls{0};
  std::atomic<int> calls{0};
  const std::uint64_t id = allocator_.attach_segment_observer([&](const SegmentEvent&) {
    calls.fetch_add(1);
    std::this_thread::yield();
    if (detached.load()) late_calls.fetch_add(1);
  });
  std::atomic<bool> stop{false};
  std::thread mapper([&] {
    while (!stop.load()) {
      void* p = allocator_.allocate(4 * MiB, kStream);
      allocator_.deallocate(p);
      allocator_.empty_cache();
    }
  });
  while (calls.load() < 20) std::this_thread::yield();
  allocator_.detach_segment_observer(id);
  detached.store(true);
  const int calls_at_detach = calls.load();
  for (int i = 0; i < 20; ++i) std::this_thread::yield();
  stop.store(true);
  mapper.join();
  EXPECT_EQ(late_calls.load(), 0);
  EXPECT_EQ(calls.load(), calls_at_detach);
}

// An observer may detach itself from inside its call (the allocator's lock is held then, the
// observers' registry's is not), and is not called again.
TEST_P(SegmentObservers, AnObserverMayDetachItself) {
  std::uint64_t id = 0;
  int calls = 0;
  id = allocator_.attach_segment_observer([&](const SegmentEvent&) {
    ++calls;
    allocator_.detach_segment_observer(id);
  });
  void* p = allocator_.allocate(4 * MiB, kStream);
  allocator_.deallocate(p);
  allocator_.empty_cache();
  EXPECT_EQ(calls, 1);
  EXPECT_THROW(allocator_.detach_segment_observer(id), InvalidArgumentError);
}

}  // namespace
}  // namespace cudakit::memory
