// Host tier of green contexts: the SM rounding and split arithmetic from a device's resource.
#include "cudakit/core/sm_partition.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cudakit/core/error.hpp"

namespace cudakit {
namespace {

// An H100/H200-like resource: 132 SMs, partitions of at least 8 in multiples of 8.
constexpr SmResourceInfo kHopper{132, 8, 8};
// An Ampere-like one: 108 SMs, at least 4, multiples of 2.
constexpr SmResourceInfo kAmpere{108, 4, 2};

std::string refusal(const SmResourceInfo& resource, std::vector<unsigned> requested) {
  try {
    (void)plan_sm_split(resource, requested);
  } catch (const InvalidArgumentError& error) {
    return error.what();
  }
  ADD_FAILURE() << "accepted";
  return {};
}

TEST(SmPartition, RoundsUpToTheMinimumAndTheAlignment) {
  EXPECT_EQ(granted_sm_count(kHopper, 1), 8u);
  EXPECT_EQ(granted_sm_count(kHopper, 8), 8u);
  EXPECT_EQ(granted_sm_count(kHopper, 9), 16u);
  EXPECT_EQ(granted_sm_count(kHopper, 64), 64u);
  EXPECT_EQ(granted_sm_count(kHopper, 128), 128u);
  EXPECT_EQ(granted_sm_count(kAmpere, 1), 4u);
  EXPECT_EQ(granted_sm_count(kAmpere, 5), 6u);
  EXPECT_EQ(granted_sm_count(kAmpere, 108), 108u);
}

TEST(SmPartition, RefusesWhatTheDeviceCannotGiveSayingWhy) {
  const std::string too_many = refusal(kHopper, {130});
  EXPECT_NE(too_many.find("130 SMs requested, 136 after rounding"), std::string::npos) << too_many;
  EXPECT_NE(too_many.find("132 SMs, partitions of at least 8 in multiples of 8"), std::string::npos) << too_many;
  EXPECT_NE(refusal(kHopper, {0}).find("0 SMs"), std::string::npos);
  EXPECT_NE(refusal({0, 0, 0}, {8}).find("describes no SMs"), std::string::npos);
  EXPECT_NE(refusal(kHopper, {}).find("no partitions"), std::string::npos);
  EXPECT_THROW((void)granted_sm_count(kHopper, 0xFFFFFFFFu), InvalidArgumentError);  // no wrap-around
}

TEST(SmPartition, SplitsFitOrNameEveryGrant) {
  EXPECT_EQ(plan_sm_split(kHopper, std::vector<unsigned>{64, 64}), (std::vector<unsigned>{64, 64}));
  EXPECT_EQ(plan_sm_split(kHopper, std::vector<unsigned>{16, 33, 60}), (std::vector<unsigned>{16, 40, 64}));
  const std::string message = refusal(kHopper, {64, 65});
  EXPECT_NE(message.find("64 -> 64, 65 -> 72 SMs need 136"), std::string::npos) << message;
}

}  // namespace
}  // namespace cudakit
