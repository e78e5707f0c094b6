// What the CUPTI hub does without a GPU: it must load (or report why not) without throwing,
// and its clock and names must work either way.

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "cudakit/core/cupti_hub.hpp"
#include "cudakit/core/error.hpp"

namespace cudakit {
namespace {

TEST(CuptiHubHost, ReportsAvailabilityWithoutThrowing) {
  CuptiHub& hub = CuptiHub::instance();
  EXPECT_EQ(&hub, &CuptiHub::instance());
  // Without a driver CUPTI may or may not subscribe; either way the answer is explained.
  if (!hub.available()) {
    EXPECT_FALSE(hub.reason().empty());
    EXPECT_THROW((void)hub.add_activity_listener({CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL},
                                                 [](const CUpti_Activity&) {}),
                 StateError);
    EXPECT_THROW((void)hub.add_callback(CUPTI_CB_DOMAIN_RUNTIME_API, {}), StateError);
  }
  hub.flush();                  // harmless with nothing enabled
  hub.remove_callback(123456);  // unknown ids are ignored
  hub.remove_activity_listener(123456);
}

TEST(CuptiHubHost, ClockIsMonotonicNanoseconds) {
  CuptiHub& hub = CuptiHub::instance();
  const std::uint64_t a = hub.timestamp();
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  const std::uint64_t b = hub.timestamp();
  EXPECT_GE(b - a, 2'000'000u);
  EXPECT_LT(b - a, 2'000'000'000u);
}

TEST(CuptiHubHost, RejectsUnknownActivityKinds) {
  CuptiHub& hub = CuptiHub::instance();
  if (!hub.available()) GTEST_SKIP() << hub.reason();
  EXPECT_THROW((void)hub.add_activity_listener({static_cast<CUpti_ActivityKind>(100000)},
                                               [](const CUpti_Activity&) {}),
               InvalidArgumentError);
}

}  // namespace
}  // namespace cudakit
