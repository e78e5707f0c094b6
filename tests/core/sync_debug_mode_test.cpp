// Host tier: the sync debug mode's names, scopes, warnings once per call site and errors; the
// allocator's device-wide synchronization (empty_cache) in each mode, on a host provider.

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <thread>

#include "cudakit/core/error.hpp"
#include "cudakit/core/sync_debug_mode.hpp"
#include "cudakit/memory/caching_allocator.hpp"
#include "cudakit/memory/host_segment_provider.hpp"
#include "support/captured_log.hpp"

namespace cudakit {
namespace {

using cudakit::testing::CapturedLog;

// Restores the process's mode after each test.
class SyncDebugMode_ : public ::testing::Test {
 protected:
  void TearDown() override { set_sync_debug_mode(SyncDebugMode::off); }
};

TEST_F(SyncDebugMode_, TakesTorchsNamesAndNumbersAndNamesABadOne) {
  EXPECT_EQ(parse_sync_debug_mode("default"), SyncDebugMode::off);
  EXPECT_EQ(parse_sync_debug_mode("0"), SyncDebugMode::off);
  EXPECT_EQ(parse_sync_debug_mode("warn"), SyncDebugMode::warn);
  EXPECT_EQ(parse_sync_debug_mode("1"), SyncDebugMode::warn);
  EXPECT_EQ(parse_sync_debug_mode("error"), SyncDebugMode::error);
  EXPECT_EQ(parse_sync_debug_mode("2"), SyncDebugMode::error);
  try {
    set_sync_debug_mode("loud");
    FAIL() << "accepted";
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown mode 'loud'"), std::string::npos) << e.what();
  }
  EXPECT_EQ(get_sync_debug_mode(), SyncDebugMode::off) << "a refused name changes nothing";
  set_sync_debug_mode("warn");
  EXPECT_EQ(get_sync_debug_mode(), SyncDebugMode::warn);
  EXPECT_STREQ(to_string(get_sync_debug_mode()), "warn");
}

TEST_F(SyncDebugMode_, AScopeSetsItsThreadsModeOnlyAndNests) {
  set_sync_debug_mode(SyncDebugMode::warn);
  {
    SyncDebugModeScope error(SyncDebugMode::error);
    EXPECT_EQ(get_sync_debug_mode(), SyncDebugMode::error);
    SyncDebugMode other_thread = SyncDebugMode::off;
    std::thread([&] { other_thread = get_sync_debug_mode(); }).join();
    EXPECT_EQ(other_thread, SyncDebugMode::warn) << "another thread follows the process";
    {
      SyncDebugModeScope off(SyncDebugMode::off);
      EXPECT_EQ(get_sync_debug_mode(), SyncDebugMode::off);
      EXPECT_NO_THROW(detail::check_synchronization("inner"));
    }
    EXPECT_THROW(detail::check_synchronization("outer"), StateError);
  }
  EXPECT_EQ(get_sync_debug_mode(), SyncDebugMode::warn);
}

[[gnu::noinline]] void synchronize_here(const char* api) { detail::check_synchronization(api); }
[[gnu::noinline]] void synchronize_elsewhere(const char* api) { detail::check_synchronization(api); }

TEST_F(SyncDebugMode_, WarnsOncePerCallSiteWithTheStack) {
  CapturedLog log;
  set_sync_debug_mode(SyncDebugMode::warn);
#pragma GCC unroll 1  // one call site, however often it runs
  for (int i = 0; i < 3; ++i) synchronize_here("Stream::synchronize");
  synchronize_elsewhere("Stream::synchronize");
  const auto records = log.records();
  ASSERT_EQ(records.size(), 2u) << "one warning per call site";
  EXPECT_EQ(records[0].first, LogLevel::warning);
  EXPECT_NE(records[0].second.find("Stream::synchronize is a synchronizing operation"), std::string::npos)
      << records[0].second;
  EXPECT_NE(records[0].second.find("#0 "), std::string::npos) << "the stack: " << records[0].second;
  set_sync_debug_mode(SyncDebugMode::off);
  synchronize_elsewhere("Stream::synchronize");
  EXPECT_EQ(log.records().size(), 2u);
}

TEST_F(SyncDebugMode_, ErrorModeRefusesTheCallByName) {
  set_sync_debug_mode(SyncDebugMode::error);
  try {
    detail::check_synchronization("Event::synchronize");
    FAIL() << "not refused";
  } catch (const StateError& e) {
    EXPECT_EQ(e.api(), "Event::synchronize");
    EXPECT_NE(std::string(e.what()).find("sync debug mode is 'error'"), std::string::npos) << e.what();
  }
}

// empty_cache synchronizes the device before returning memory: refused in error mode with the
// cache left as it was, warned about in warn mode, silent when off.
TEST_F(SyncDebugMode_, TheAllocatorsEmptyCacheIsASynchronizingCall) {
  auto provider = std::make_shared<memory::HostSegmentProvider>(std::size_t{1} << 30);
  memory::CachingAllocator allocator(0, provider, std::make_shared<memory::HostStreamEvents>());
  allocator.deallocate(allocator.allocate(8 << 20, 0x10));
  const std::size_t cached = provider->in_use();
  ASSERT_GT(cached, 0u);
  set_sync_debug_mode(SyncDebugMode::error);
  EXPECT_THROW(allocator.empty_cache(), StateError);
  EXPECT_EQ(provider->in_use(), cached) << "a refused empty_cache returns nothing";
  CapturedLog log;
  set_sync_debug_mode(SyncDebugMode::warn);
  allocator.empty_cache();
  EXPECT_EQ(provider->in_use(), 0u);
  ASSERT_EQ(log.records().size(), 1u);
  EXPECT_NE(log.records()[0].second.find("CachingAllocator::empty_cache"), std::string::npos);
  set_sync_debug_mode(SyncDebugMode::off);
  allocator.empty_cache();
  EXPECT_EQ(log.records().size(), 1u);
}

}  // namespace
}  // namespace cudakit
