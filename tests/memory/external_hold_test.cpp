// Host tier: the caching allocator's external holds (See Note [External holds]), which keep a
// block exported to another process from being reused after the program frees it.

#include <gtest/gtest.h>

#include "cudakit/core/error.hpp"
#include "cudakit/memory/caching_allocator.hpp"
#include "cudakit/memory/host_segment_provider.hpp"

namespace cudakit::memory {
namespace {

constexpr std::size_t MiB = 1u << 20;
constexpr StreamKey kStreamA = 0x1000;
constexpr StreamKey kStreamB = 0x2000;

class ExternalHolds : public ::testing::TestWithParam<bool> {
 protected:
  explicit ExternalHolds(bool auto_events = true)
      : provider_(std::make_shared<HostSegmentProvider>(8ull << 30)),
        events_(std::make_shared<HostStreamEvents>(auto_events)),
        allocator_(0, provider_, events_, config()) {}
  static AllocatorConfig config() {
    AllocatorConfig c;
    c.expandable_segments = GetParam();
    return c;
  }
  std::int64_t allocated() const { return allocator_.stats().allocated_bytes[0].current; }
  std::int64_t active() const { return allocator_.stats().active_bytes[0].current; }
  std::int64_t active_blocks() const { return allocator_.stats().active[0].current; }

  std::shared_ptr<HostSegmentProvider> provider_;
  std::shared_ptr<HostStreamEvents> events_;
  CachingAllocator allocator_;
};
INSTANTIATE_TEST_SUITE_P(Expandable, ExternalHolds, ::testing::Bool());

TEST_P(ExternalHolds, AHeldBlockIsNotReusedAfterItsFreeUntilReleased) {
  void* a = allocator_.allocate(4 * MiB, kStreamA);
  allocator_.add_external_hold(a);
  EXPECT_EQ(allocator_.external_holds(a), 1u);
  EXPECT_EQ(allocator_.allocation_size(a), 4 * MiB);  // still an allocation until freed
  allocator_.deallocate(a);
  // Freed as the program sees it, active (pending) as the memory is.
  EXPECT_EQ(allocated(), 0);
  EXPECT_EQ(active(), static_cast<std::int64_t>(4 * MiB));
  EXPECT_EQ(active_blocks(), 1);
  void* b = allocator_.allocate(4 * MiB, kStreamA);
  EXPECT_NE(b, a);
  allocator_.empty_cache();  // releases nothing the held block lies in
  EXPECT_EQ(allocator_.external_holds(a), 1u);
  allocator_.release_external_hold(a);
  EXPECT_EQ(allocator_.external_holds(a), 0u);
  EXPECT_EQ(allocated(), static_cast<std::int64_t>(4 * MiB));
  EXPECT_EQ(active(), static_cast<std::int64_t>(4 * MiB));  // b only
  void* c = allocator_.allocate(4 * MiB, kStreamA);
  EXPECT_EQ(c, a);  // reusable again
  allocator_.deallocate(b);
  allocator_.deallocate(c);
  EXPECT_EQ(allocated(), 0);
  EXPECT_EQ(active(), 0);
  allocator_.empty_cache();
  EXPECT_EQ(allocator_.stats().reserved_bytes[0].current, 0);
  EXPECT_EQ(provider_->in_use(), 0u);
}

TEST_P(ExternalHolds, ReleasedBeforeTheFreeTheBlockIsAnOrdinaryAllocation) {
  void* a = allocator_.allocate(1000, kStreamA);
  allocator_.add_external_hold(a);
  allocator_.add_external_hold(a);
  EXPECT_EQ(allocator_.external_holds(a), 2u);
  allocator_.release_external_hold(a);
  allocator_.release_external_hold(a);
  EXPECT_EQ(allocator_.external_holds(a), 0u);
  allocator_.deallocate(a);
  EXPECT_EQ(allocator_.allocate(1000, kStreamA), a);  // freed at once, as without holds
  allocator_.deallocate(a);
  EXPECT_EQ(allocated(), 0);
  EXPECT_EQ(active(), 0);
}

TEST_P(ExternalHolds, TheLastOfSeveralHoldsCompletesTheFree) {
  void* a = allocator_.allocate(2 * MiB, kStreamA);
  allocator_.add_external_hold(a);
  allocator_.add_external_hold(a);
  allocator_.deallocate(a);
  allocator_.release_external_hold(a);
  void* b = allocator_.allocate(2 * MiB, kStreamA);
  EXPECT_NE(b, a);
  allocator_.release_external_hold(a);
  void* c = allocator_.allocate(2 * MiB, kStreamA);
  EXPECT_EQ(c, a);
  allocator_.deallocate(b);
  allocator_.deallocate(c);
  EXPECT_EQ(active(), 0);
}

class ExternalHoldsManualEvents : public ExternalHolds {
 protected:
  ExternalHoldsManualEvents() : ExternalHolds(/*auto_events=*/false) {}
};
INSTANTIATE_TEST_SUITE_P(Expandable, ExternalHoldsManualEvents, ::testing::Bool());

TEST_P(ExternalHoldsManualEvents, ReleaseWaitsForRecordedStreamsToo) {
  void* a = allocator_.allocate(4096, kStreamA);
  allocator_.record_stream(a, kStreamB);  // record_stream finds a held block as well
  allocator_.add_external_hold(a);
  allocator_.deallocate(a);
  allocator_.release_external_hold(a);
  EXPECT_EQ(active(), 4096);  // now pending on stream B's events
  EXPECT_NE(allocator_.allocate(4096, kStreamA), a);
  events_->complete_up_to(kStreamB, events_->last_ticket(kStreamB));
  allocator_.process_events();
  EXPECT_EQ(allocator_.allocate(4096, kStreamA), a);
}

TEST_P(ExternalHolds, MisuseIsAClearError) {
  int not_ours = 0;
  EXPECT_THROW(allocator_.add_external_hold(&not_ours), InvalidArgumentError);
  EXPECT_THROW(allocator_.add_external_hold(nullptr), InvalidArgumentError);
  void* a = allocator_.allocate(4096, kStreamA);
  try {
    allocator_.release_external_hold(a);
    FAIL() << "released a hold that was never added";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("has no external hold"), std::string::npos) << e.what();
  }
  allocator_.add_external_hold(a);
  allocator_.deallocate(a);
  EXPECT_THROW(allocator_.deallocate(a), InvalidArgumentError);        // double free
  EXPECT_THROW(allocator_.add_external_hold(a), InvalidArgumentError);  // freed: nothing to hold
  EXPECT_THROW((void)allocator_.allocation_size(a), InvalidArgumentError);
  EXPECT_THROW((void)allocator_.backing(a), InvalidArgumentError);
  allocator_.release_external_hold(a);
  EXPECT_THROW(allocator_.release_external_hold(a), InvalidArgumentError);
  EXPECT_EQ(allocator_.external_holds(&not_ours), 0u);
}

TEST_P(ExternalHolds, SnapshotShowsAFreedHeldBlockAsPendingFree) {
  void* a = allocator_.allocate(4096, kStreamA);
  allocator_.add_external_hold(a);
  allocator_.deallocate(a);
  bool found = false;
  for (const auto& seg : allocator_.snapshot().segments) {
    for (const auto& b : seg.blocks) {
      if (b.address == reinterpret_cast<std::uintptr_t>(a)) {
        found = true;
        EXPECT_EQ(b.state, BlockSnapshot::State::active_pending_free);
      }
    }
  }
  EXPECT_TRUE(found);
  allocator_.release_external_hold(a);
}

TEST_P(ExternalHolds, BackingNamesTheSegmentOrTheChunksUnderTheBlock) {
  const bool expandable = GetParam();
  void* a = allocator_.allocate(3 * MiB, kStreamA);
  void* b = allocator_.allocate(5 * MiB, kStreamA);
  const CachingAllocator::Backing backing = allocator_.backing(b);
  EXPECT_EQ(backing.block, b);
  EXPECT_EQ(backing.block_size, 5 * MiB);
  EXPECT_EQ(backing.expandable, expandable);
  ASSERT_FALSE(backing.ranges.empty());
  const auto* first = static_cast<const char*>(backing.ranges.front().base);
  const auto& last = backing.ranges.back();
  EXPECT_LE(first, static_cast<const char*>(b));
  EXPECT_GE(static_cast<const char*>(last.base) + last.size, static_cast<const char*>(b) + 5 * MiB);
  for (std::size_t i = 1; i < backing.ranges.size(); ++i) {  // contiguous, in address order
    EXPECT_EQ(static_cast<const char*>(backing.ranges[i - 1].base) + backing.ranges[i - 1].size,
              backing.ranges[i].base);
  }
  if (expandable) {
    // a grew the arena by its 4 MiB (2 MiB pages); b by 6 MiB more: b spans both chunks.
    ASSERT_EQ(backing.ranges.size(), 2u);
    EXPECT_EQ(backing.ranges[0].base, a);
  } else {
    ASSERT_EQ(backing.ranges.size(), 1u);
    EXPECT_EQ(backing.ranges[0].size, 20 * MiB);  // torch's segment for requests under 10 MiB
  }
  allocator_.deallocate(a);
  allocator_.deallocate(b);
}

}  // namespace
}  // namespace cudakit::memory
