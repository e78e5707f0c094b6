// Host tier: a communicator's registrations of the caching allocator's segments follow the
// allocator (See Note [Registering the allocator's segments]), driven by the real allocator on
// host memory; registration itself is NCCL's (GPU tier), here a function that hands out
// handles and keeps what is registered.

#include "nccl/detail/segment_registrations.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <thread>

#include "cudakit/memory/host_segment_provider.hpp"

namespace cudakit::nccl::detail {
namespace {

constexpr std::size_t MiB = 1u << 20;
constexpr memory::StreamKey kStream = 0x1000;

// What a registration function was asked: handles out, ranges by handle.
struct Registry {
  std::mutex mutex;
  std::map<void*, RegisteredSegment> live;  // by handle
  std::size_t registered = 0, deregistered = 0;
  std::uintptr_t next_handle = 0x10;
  void* refuse_at = nullptr;  // a base the "NCCL" refuses to register

  SegmentRegistrations::Register register_function() {
    return [this](void* base, std::size_t bytes) -> void* {
      std::lock_guard lock(mutex);
      if (base == refuse_at) return nullptr;
      void* handle = reinterpret_cast<void*>(next_handle++);
      live[handle] = {base, bytes};
      ++registered;
      return handle;
    };
  }
  SegmentRegistrations::Deregister deregister_function() {
    return [this](void* handle) {
      std::lock_guard lock(mutex);
      EXPECT_EQ(live.erase(handle), 1u) << "deregistered a handle never registered (or twice)";
      ++deregistered;
    };
  }
  std::vector<RegisteredSegment> ranges() {
    std::lock_guard lock(mutex);
    std::vector<RegisteredSegment> out;
    for (const auto& [h, r] : live) out.push_back(r);
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.base < b.base; });
    return out;
  }
};

class SegmentRegistrationsTest : public ::testing::TestWithParam<bool> {
 protected:
  SegmentRegistrationsTest()
      : allocator_(0, std::make_shared<memory::HostSegmentProvider>(8ull << 30),
                   std::make_shared<memory::HostStreamEvents>(true), config()) {}
  static memory::AllocatorConfig config() {
    memory::AllocatorConfig c;
    c.expandable_segments = GetParam();
    return c;
  }
  std::size_t reserved() const { return static_cast<std::size_t>(allocator_.stats().reserved_bytes[0].current); }
  static std::size_t total(const std::vector<RegisteredSegment>& ranges) {
    std::size_t n = 0;
    for (const auto& r : ranges) n += r.bytes;
    return n;
  }

  memory::CachingAllocator allocator_;
  Registry registry_;
};
INSTANTIATE_TEST_SUITE_P(Expandable, SegmentRegistrationsTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "expandable" : "classic"; });

TEST_P(SegmentRegistrationsTest, RegistrationsFollowTheAllocatorsSegments) {
  void* early = allocator_.allocate(3 * MiB, kStream);
  SegmentRegistrations registrations(allocator_, registry_.register_function(), registry_.deregister_function());
  EXPECT_EQ(total(registrations.segments()), reserved()) << "what existed at creation is registered";
  EXPECT_EQ(registrations.segments(), registry_.ranges());

  void* big = allocator_.allocate(96 * MiB, kStream);
  const std::size_t registered_before_free = registrations.segments().size();
  EXPECT_EQ(total(registrations.segments()), reserved()) << "a new segment is registered as it maps";
  EXPECT_EQ(registrations.segments(), registry_.ranges());
  const auto registered = registrations.segments();
  for (const auto& range : allocator_.backing(big).ranges) {
    const RegisteredSegment wanted{range.base, range.size};
    EXPECT_NE(std::find(registered.begin(), registered.end(), wanted), registered.end())
        << "the memory behind the new allocation (" << range.base << ", " << range.size << " bytes) is registered";
  }

  allocator_.deallocate(big);
  allocator_.empty_cache();
  EXPECT_LT(registrations.segments().size(), registered_before_free) << "the registered set shrinks with the segments";
  EXPECT_EQ(total(registrations.segments()), reserved());
  EXPECT_EQ(registrations.segments(), registry_.ranges()) << "deregistered before the allocator returned it";

  allocator_.deallocate(early);
  allocator_.empty_cache();
  EXPECT_TRUE(registrations.segments().empty());
  EXPECT_TRUE(registry_.ranges().empty());
  EXPECT_EQ(registry_.registered, registry_.deregistered);
}

TEST_P(SegmentRegistrationsTest, ClosingDeregistersWhatIsLeftAndStopsFollowing) {
  SegmentRegistrations registrations(allocator_, registry_.register_function(), registry_.deregister_function());
  void* p = allocator_.allocate(40 * MiB, kStream);
  ASSERT_FALSE(registry_.ranges().empty());
  registrations.close();
  EXPECT_TRUE(registry_.ranges().empty()) << "close deregisters every range left";
  EXPECT_TRUE(registrations.segments().empty());
  void* q = allocator_.allocate(200 * MiB, kStream);
  EXPECT_TRUE(registry_.ranges().empty()) << "a closed registration set follows no more";
  allocator_.deallocate(p);
  allocator_.deallocate(q);
  allocator_.empty_cache();
  EXPECT_EQ(registry_.registered, registry_.deregistered);
  registrations.close();  // again: nothing
}

TEST_P(SegmentRegistrationsTest, ARangeNcclRefusesIsUsedUnregisteredAndNeverDeregistered) {
  void* first = allocator_.allocate(3 * MiB, kStream);
  const auto base = allocator_.backing(first).ranges.front().base;
  registry_.refuse_at = base;
  SegmentRegistrations registrations(allocator_, registry_.register_function(), registry_.deregister_function());
  for (const auto& r : registrations.segments()) EXPECT_NE(r.base, base);
  allocator_.deallocate(first);
  allocator_.empty_cache();
  EXPECT_EQ(registry_.registered, registry_.deregistered);
}

TEST(SegmentRegistrationsConcurrency, ThreadsMappingAndFreeingKeepRegistrationsInStep) {
  memory::AllocatorConfig config;
  config.expandable_segments = false;
  memory::CachingAllocator allocator(0, std::make_shared<memory::HostSegmentProvider>(32ull << 30),
                                     std::make_shared<memory::HostStreamEvents>(true), config);
  Registry registry;
  SegmentRegistrations registrations(allocator, registry.register_function(), registry.deregister_function());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      const memory::StreamKey stream = 0x1000 * (t + 1);
      for (int i = 0; i < 50; ++i) {
        void* p = allocator.allocate((std::size_t(i % 7) + 1) * 24 * MiB, stream);
        allocator.deallocate(p);
        if (i % 10 == 9) allocator.empty_cache();
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(registrations.segments(), registry.ranges());
  allocator.empty_cache();
  EXPECT_TRUE(registry.ranges().empty());
  EXPECT_EQ(registry.registered, registry.deregistered);
}

}  // namespace
}  // namespace cudakit::nccl::detail
