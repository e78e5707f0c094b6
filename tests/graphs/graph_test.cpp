// Host tier: Graph misuse fails with StateError before any CUDA call, and says what to do.

#include <gtest/gtest.h>

#include <functional>
#include <vector>

#include <string>

#include "cudakit/core/error.hpp"
#include "cudakit/graphs/graph.hpp"

namespace {

using namespace cudakit;
using graphs::Graph;

// A stream reference that makes no CUDA call: these checks must fail before reaching CUDA.
constexpr StreamRef kSomeStream{nullptr, 0};

template <class F>
std::string state_error_of(F&& f) {
  try {
    f();
  } catch (const StateError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a StateError";
  return {};
}

bool contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

TEST(GraphMisuse, ReplayOfEmptyGraph) {
  Graph g;
  const auto message = state_error_of([&] { g.replay(kSomeStream); });
  EXPECT_TRUE(contains(message, "Graph::replay")) << message;
  EXPECT_TRUE(contains(message, "never captured, or was reset")) << message;
}

TEST(GraphMisuse, ReplayAfterReset) {
  Graph g;
  g.reset();
  g.reset();  // idempotent
  EXPECT_TRUE(contains(state_error_of([&] { g.replay(kSomeStream); }), "empty"));
}

TEST(GraphMisuse, CaptureEndWithoutBegin) {
  Graph g;
  const auto message = state_error_of([&] { g.capture_end(); });
  EXPECT_TRUE(contains(message, "Graph::capture_end")) << message;
  EXPECT_TRUE(contains(message, "call capture_begin first")) << message;
}

TEST(GraphMisuse, InstantiateAndDumpWithoutCapture) {
  Graph g(/*keep_graph=*/true);
  EXPECT_TRUE(contains(state_error_of([&] { g.instantiate(); }), "nothing was captured"));
  EXPECT_TRUE(contains(state_error_of([&] { g.debug_dump("/tmp/never.dot"); }), "no captured graph"));
  EXPECT_TRUE(contains(state_error_of([&] { graphs::GraphRef().replay(kSomeStream); }), "not instantiated"));
}

TEST(GraphMisuse, MovedFromGraphThrowsOnEveryUse) {
  Graph a;
  Graph b(std::move(a));
  EXPECT_FALSE(b.is_capturing());
  // NOLINTBEGIN(bugprone-use-after-move): the documented state of a moved-from owner
  for (const auto& use : std::vector<std::function<void()>>{
           [&] { a.replay(kSomeStream); }, [&] { (void)a.is_capturing(); },
           [&] { (void)a.is_instantiated(); }, [&] { (void)a.device(); }, [&] { (void)a.ref(); },
           [&] { (void)a.pool(); }, [&] { a.instantiate(); }, [&] { a.capture_end(); },
           [&] { a.capture_begin(); }, [&] { a.debug_dump("unused.dot"); },
           [&] { a.set_instantiate_options({}); }, [&] { (void)a.instantiate_options(); }}) {
    EXPECT_TRUE(contains(state_error_of(use), "this Graph was moved from"));
  }
  a.capture_abort();  // the no-throw members stay quiet
  a.reset();
  // NOLINTEND(bugprone-use-after-move)
  a = std::move(b);
  EXPECT_FALSE(a.is_instantiated());
  EXPECT_EQ(a.device(), -1);
}

TEST(GraphInstantiateOptions, TorchsFlagsByDefaultAndKeptAcrossReset) {
  // torch 2.11's CUDAGraph::instantiate: AutoFreeOnLaunch | UseNodePriority.
  EXPECT_EQ(graphs::InstantiateOptions{}.cuda_flags(),
            static_cast<unsigned long long>(cudaGraphInstantiateFlagAutoFreeOnLaunch |
                                            cudaGraphInstantiateFlagUseNodePriority));
  EXPECT_EQ((graphs::InstantiateOptions{.auto_free_on_launch = false, .use_node_priority = false}.cuda_flags()), 0ull);
  Graph g;
  EXPECT_EQ(g.instantiate_options(), graphs::InstantiateOptions{});
  const graphs::InstantiateOptions mine{.auto_free_on_launch = true, .use_node_priority = false};
  g.set_instantiate_options(mine);  // before any capture: no CUDA call
  g.reset();
  EXPECT_EQ(g.instantiate_options(), mine);
  Graph moved(std::move(g));
  EXPECT_EQ(moved.instantiate_options(), mine);
}

TEST(GraphPoolHandle, FreshIdsEachCall) {
  const auto a = graphs::graph_pool_handle();
  const auto b = graphs::graph_pool_handle();
  EXPECT_FALSE(a.is_default());
  EXPECT_NE(a, b);
}

}  // namespace
