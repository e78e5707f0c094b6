// Host tier: attaching, dispatching and detaching trace listeners, and the events the host-side
// operations report (an Event that was never recorded needs no GPU).

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include "cudakit/core/error.hpp"
#include "cudakit/core/event.hpp"
#include "cudakit/core/log.hpp"
#include "cudakit/core/trace_hooks.hpp"

namespace {

using cudakit::TraceEvent;
using cudakit::TraceEventKind;

// Attaches a listener that keeps the events it sees, for the scope.
class Recorder {
 public:
  Recorder() {
    id_ = cudakit::attach_trace_listener([this](const TraceEvent& e) {
      std::lock_guard lock(mutex_);
      kinds_.push_back(e.kind);
    });
  }
  ~Recorder() { cudakit::detach_trace_listener(id_); }
  std::vector<TraceEventKind> kinds() {
    std::lock_guard lock(mutex_);
    return kinds_;
  }

 private:
  std::uint64_t id_;
  std::mutex mutex_;
  std::vector<TraceEventKind> kinds_;
};

TEST(TraceHooks, ActiveOnlyWhileAListenerIsAttached) {
  ASSERT_FALSE(cudakit::trace_hooks_active());
  {
    Recorder recorder;
    EXPECT_TRUE(cudakit::trace_hooks_active());
    {
      Recorder second;
      EXPECT_TRUE(cudakit::trace_hooks_active());
    }
    EXPECT_TRUE(cudakit::trace_hooks_active());
  }
  EXPECT_FALSE(cudakit::trace_hooks_active());
  cudakit::detach_trace_listener(987654);  // unknown ids are ignored
  EXPECT_FALSE(cudakit::trace_hooks_active());
}

TEST(TraceHooks, EveryListenerSeesEveryReportedEventInOrder) {
  Recorder a, b;
  CUDAKIT_TRACE({.kind = TraceEventKind::memset, .pointer = &a, .bytes = 8});
  CUDAKIT_TRACE({.kind = TraceEventKind::device_synchronize, .device = 0});
  const std::vector<TraceEventKind> expected{TraceEventKind::memset,
                                             TraceEventKind::device_synchronize};
  EXPECT_EQ(a.kinds(), expected);
  EXPECT_EQ(b.kinds(), expected);
}

TEST(TraceHooks, NothingIsBuiltOrCalledWithoutListeners) {
  int built = 0;
  const auto bytes = [&] {
    ++built;
    return std::size_t{1};
  };
  CUDAKIT_TRACE({.kind = TraceEventKind::memset, .bytes = bytes()});
  EXPECT_EQ(built, 0);
}

TEST(TraceHooks, AThrowingListenerRefusesTheOperationOrIsLoggedWhereNothingMayThrow) {
  const auto id = cudakit::attach_trace_listener([](const TraceEvent& e) {
    if (e.kind == TraceEventKind::memset) throw std::runtime_error("race on the memset");
  });
  EXPECT_THROW(CUDAKIT_TRACE({.kind = TraceEventKind::memset}), std::runtime_error);
  std::vector<std::string> logged;
  const auto level = cudakit::log_level();
  cudakit::set_log_level(cudakit::LogLevel::warning);
  auto previous = cudakit::set_log_sink(
      [&](const cudakit::LogRecord& r) { logged.emplace_back(r.message); });
  EXPECT_NO_THROW(CUDAKIT_TRACE_NOTHROW({.kind = TraceEventKind::memset}));
  cudakit::set_log_sink(std::move(previous));
  cudakit::set_log_level(level);
  cudakit::detach_trace_listener(id);
  ASSERT_EQ(logged.size(), 1u);
  EXPECT_NE(logged[0].find("memset: race on the memset"), std::string::npos) << logged[0];
}

TEST(TraceHooks, EmptyListenerIsRefused) {
  EXPECT_THROW(cudakit::attach_trace_listener({}), cudakit::InvalidArgumentError);
}

TEST(TraceHooks, EveryKindHasAName) {
  for (int k = 0; k <= static_cast<int>(TraceEventKind::collective); ++k) {
    EXPECT_STRNE(cudakit::to_string(static_cast<TraceEventKind>(k)), "unknown") << k;
  }
}

TEST(TraceHooks, DetachWaitsForCallsInProgressOnOtherThreads) {
  std::atomic<bool> inside{false}, release{false}, finished{false};
  const auto id = cudakit::attach_trace_listener([&](const TraceEvent&) {
    inside = true;
    while (!release.load()) std::this_thread::yield();
    finished = true;
  });
  std::thread reporter([] { CUDAKIT_TRACE({.kind = TraceEventKind::memset}); });
  while (!inside.load()) std::this_thread::yield();
  std::thread releaser([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    release = true;
  });
  cudakit::detach_trace_listener(id);
  EXPECT_TRUE(finished.load()) << "detach returned while the listener was still running";
  reporter.join();
  releaser.join();
}

TEST(TraceHooks, ConcurrentReportsAndAttachments) {
  std::atomic<bool> stop{false};
  std::atomic<long> seen{0};
  std::vector<std::thread> reporters;
  for (int t = 0; t < 4; ++t) {
    reporters.emplace_back([&] {
      while (!stop.load()) CUDAKIT_TRACE({.kind = TraceEventKind::memset});
    });
  }
  for (int i = 0; i < 200; ++i) {
    const auto id = cudakit::attach_trace_listener([&](const TraceEvent&) { seen.fetch_add(1); });
    cudakit::detach_trace_listener(id);
  }
  stop = true;
  for (auto& r : reporters) r.join();
  EXPECT_FALSE(cudakit::trace_hooks_active());
}

TEST(MovedFromOwner, EventThrowsOnEveryUse) {
  cudakit::Event a;
  cudakit::Event b(std::move(a));
  EXPECT_FALSE(b.was_recorded());
  EXPECT_TRUE(b.query());  // never recorded: complete
  for (const auto& use : std::vector<std::function<void()>>{
           [&] { (void)a.query(); }, [&] { a.synchronize(); }, [&] { (void)a.handle(); },
           [&] { (void)a.is_null(); }, [&] { (void)a.was_recorded(); }, [&] { a.record(); },
           [&] { (void)a.ref(); }, [&] { (void)b.elapsed_time(a); }}) {
    try {
      use();
      ADD_FAILURE() << "a moved-from Event was used without an error";
    } catch (const cudakit::StateError& e) {
      EXPECT_NE(std::string(e.what()).find("this Event was moved from"), std::string::npos)
          << e.what();
    }
  }
  a = std::move(b);  // assignment revives it
  EXPECT_TRUE(a.query());
  EXPECT_THROW((void)b.query(), cudakit::StateError);
}

}  // namespace
