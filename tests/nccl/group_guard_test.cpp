// Host tier: a group cudakit opens in NCCL is closed on every path (See Note [Groups end on
// every path]). NCCL's group calls run without a GPU; ncclGroupEnd outside a group is refused
// with ncclInvalidUsage, which tells whether one was left open.

#include <gtest/gtest.h>

#include <stdexcept>

#include "cudakit/nccl/detail/nccl_api.hpp"
#include "cudakit/nccl/group.hpp"
#include "cudakit/nccl/version.hpp"
#include "nccl/detail/nccl_call.hpp"

namespace {

using cudakit::nccl::detail::GroupGuard;

#define REQUIRE_NCCL_LIBRARY() \
  if (!cudakit::nccl::library_loaded()) GTEST_SKIP() << "libnccl is not available"

// Whether a group is open on this thread (closing it if so).
bool group_was_open() { return cudakit::detail::nccl_api().ncclGroupEnd() == ncclSuccess; }

TEST(NcclGroupGuard, AGroupIsOpenInsideTheGuardAndClosedAfterIt) {
  REQUIRE_NCCL_LIBRARY();
  ASSERT_FALSE(group_was_open()) << "a group was open before the test";
  {
    GroupGuard guard("test");
    EXPECT_EQ(guard.end(), ncclSuccess);
    EXPECT_FALSE(group_was_open()) << "end() closes the group";
    EXPECT_EQ(guard.end(), ncclSuccess) << "a second end() does nothing";
  }
  {
    GroupGuard outer("test");
    GroupGuard inner("test");
    EXPECT_EQ(inner.end(), ncclSuccess);
    EXPECT_TRUE(group_was_open()) << "the outer group is still open (and now closed by the check)";
    EXPECT_EQ(outer.end(), ncclInvalidUsage) << "the check above closed it: NCCL refuses a second end";
  }
  EXPECT_FALSE(group_was_open());
}

TEST(NcclGroupGuard, AThrowInsideTheGuardLeavesNoGroupOpen) {
  REQUIRE_NCCL_LIBRARY();
  ASSERT_FALSE(group_was_open());
  try {
    GroupGuard outer("test");
    GroupGuard inner("test");
    throw std::runtime_error("a failure between ncclGroupStart and ncclGroupEnd");
  } catch (const std::runtime_error&) {
  }
  EXPECT_FALSE(group_was_open()) << "the unwinding left a group open";
}

TEST(NcclGroupGuard, AThrowInsideAProgramsGroupLeavesNoGroupOpen) {
  REQUIRE_NCCL_LIBRARY();
  ASSERT_FALSE(group_was_open());
  try {
    cudakit::nccl::Group group;
    throw std::runtime_error("a refused operation inside the group");
  } catch (const std::runtime_error&) {
  }
  EXPECT_FALSE(group_was_open()) << "Group's destructor did not end the group";
  {
    cudakit::nccl::Group group;
    group.end();
    EXPECT_FALSE(group_was_open());
  }
}

}  // namespace
