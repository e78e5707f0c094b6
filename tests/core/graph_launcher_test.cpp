// core's launch_through_graph where it must decline (Note [Launching through a one-node graph]):
// the caller then launches itself, so a decline must leave nothing queued and say so. The GPU
// tier covers the launches it takes (JitFunctionGpu.CachedCallsLaunchThroughAGraphPerStream).

#include "cudakit/core/detail/graph_launcher.hpp"

#include <gtest/gtest.h>

namespace {

namespace cd = cudakit::detail;

TEST(GraphLauncher, SwitchedOffItDeclinesEveryLaunch) {
  const bool was = cd::graph_launches_enabled();
  cd::set_graph_launches(false);
  EXPECT_FALSE(cd::graph_launches_enabled());
  const cd::GraphLaunchCounters before = cd::graph_launch_counters();
  int value = 0;
  void* parameters[] = {&value};
  const cd::GraphKernelLaunch launch{.parameters = parameters};
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(cd::launch_through_graph(launch));
  EXPECT_EQ(cd::graph_launch_counters().launches, before.launches);
  cd::set_graph_launches(true);
  EXPECT_TRUE(cd::graph_launches_enabled());
  cd::set_graph_launches(was);
}

TEST(GraphLauncher, ALaunchNoGraphCanTakeIsDeclinedEachTime) {
  // No function: without a GPU the driver is not there; with one, the graph cannot be made.
  // Either way every attempt is handed back, and none counts as launched.
  const bool was = cd::graph_launches_enabled();
  cd::set_graph_launches(true);
  const cd::GraphLaunchCounters before = cd::graph_launch_counters();
  const cd::GraphKernelLaunch launch{};
  for (int i = 0; i < 4; ++i) EXPECT_FALSE(cd::launch_through_graph(launch)) << "attempt " << i;
  const cd::GraphLaunchCounters after = cd::graph_launch_counters();
  EXPECT_EQ(after.launches, before.launches);
  EXPECT_EQ(after.updates, before.updates);
  cd::set_graph_launches(was);
}

}  // namespace
