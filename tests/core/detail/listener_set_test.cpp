// Listener snapshots never call a removed listener (Note [Listener snapshots]).

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>

#include "cudakit/core/detail/listener_set.hpp"

namespace cudakit::detail {
namespace {

TEST(ListenerSet, RemoveWaitsForInFlightDispatch) {
  ListenerSet<std::function<void()>> set;
  std::atomic<bool> entered{false}, release{false}, removed_returned{false};
  std::atomic<int> calls_after_remove{0};
  const int id = set.add([&] {
    entered = true;
    while (!release) std::this_thread::yield();
    if (removed_returned) ++calls_after_remove;
  });
  std::thread dispatcher([&] { set.for_each([](const auto& fn) { fn(); }); });
  while (!entered) std::this_thread::yield();
  std::thread remover([&] {
    EXPECT_NE(set.remove(id), nullptr);
    removed_returned = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(removed_returned);  // still inside the listener
  release = true;
  dispatcher.join();
  remover.join();
  EXPECT_TRUE(removed_returned);
  EXPECT_EQ(calls_after_remove, 0);
  EXPECT_TRUE(set.empty());
  EXPECT_EQ(set.remove(id), nullptr);
}

}  // namespace
}  // namespace cudakit::detail
