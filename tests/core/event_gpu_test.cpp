#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "cudakit/core/error.hpp"
#include "cudakit/core/event.hpp"
#include "cudakit/core/stream.hpp"
#include "support/gpu_test.hpp"
#include "support/kernels.hpp"
#include "support/paths.hpp"

namespace {

using cudakit::Event;
using cudakit::EventFlags;
using cudakit::Stream;

TEST(EventGpu, UnrecordedEventIsCompleteAndWaitIsANoOp) {
  CUDAKIT_REQUIRE_GPU();
  Event e;
  EXPECT_TRUE(e.query());
  e.synchronize();
  Stream s;
  e.wait(s);
  EXPECT_TRUE(s.query());
}

TEST(EventGpu, RecordQuerySynchronize) {
  CUDAKIT_REQUIRE_GPU();
  Stream s;
  Event e;
  cudakit::testing::launch_spin(s.handle(), 50'000'000);
  e.record(s);
  EXPECT_TRUE(e.was_recorded());
  EXPECT_FALSE(e.query());
  e.synchronize();
  EXPECT_TRUE(e.query());
}

TEST(EventGpu, ElapsedTimeMeasuresTheWorkBetween) {
  CUDAKIT_REQUIRE_GPU();
  Stream s;
  Event start(EventFlags{.enable_timing = true}), stop(EventFlags{.enable_timing = true});
  start.record(s);
  cudakit::testing::launch_spin(s.handle(), 20'000'000);
  stop.record(s);
  stop.synchronize();
  const float ms = start.elapsed_time(stop);
  EXPECT_GE(ms, 19.0f);
  EXPECT_LT(ms, 200.0f);
}

TEST(EventGpu, ElapsedTimeRejectsBadInputWithClearErrors) {
  CUDAKIT_REQUIRE_GPU();
  Stream s;
  Event timed(EventFlags{.enable_timing = true}), untimed;
  Event end(EventFlags{.enable_timing = true});
  // Not recorded.
  try {
    (void)timed.elapsed_time(end);
    FAIL();
  } catch (const cudakit::StateError& e) {
    EXPECT_NE(std::string(e.what()).find("must be recorded"), std::string::npos) << e.what();
  }
  // Without timing.
  untimed.record(s);
  end.record(s);
  try {
    (void)untimed.elapsed_time(end);
    FAIL();
  } catch (const cudakit::StateError& e) {
    EXPECT_NE(std::string(e.what()).find("enable_timing"), std::string::npos) << e.what();
  }
  // Not yet complete.
  timed.record(s);
  cudakit::testing::launch_spin(s.handle(), 50'000'000);
  end.record(s);
  try {
    (void)timed.elapsed_time(end);
    FAIL();
  } catch (const cudakit::StateError& e) {
    EXPECT_NE(std::string(e.what()).find("not completed"), std::string::npos) << e.what();
  }
  end.synchronize();
  EXPECT_GT(timed.elapsed_time(end), 0.0f);
}

TEST(EventGpu, InterprocessRequiresNoTimingAndTheFlag) {
  CUDAKIT_REQUIRE_GPU();
  EXPECT_THROW(Event(EventFlags{.enable_timing = true, .interprocess = true}),
               cudakit::InvalidArgumentError);
  Event plain;
  EXPECT_THROW((void)plain.ipc_handle(), cudakit::StateError);
}

TEST(EventGpu, GarbageIpcHandleIsAClearError) {
  CUDAKIT_REQUIRE_GPU();
  cudakit::IpcEventHandle garbage;
  for (std::size_t i = 0; i < garbage.bytes.size(); ++i) garbage.bytes[i] = static_cast<unsigned char>(0xA5 ^ i);
  try {
    (void)Event::from_ipc_handle(garbage);
    FAIL() << "a garbage handle was accepted";
  } catch (const cudakit::CudaError& e) {
    EXPECT_EQ(e.api(), "cudaIpcOpenEventHandle");
    EXPECT_NE(std::string(e.what()).find("not a live interprocess event"), std::string::npos);
  }
}

TEST(EventGpu, EventMoveKeepsTheRecording) {
  CUDAKIT_REQUIRE_GPU();
  Stream s;
  Event a;
  a.record(s);
  Event b(std::move(a));
  EXPECT_TRUE(b.was_recorded());
  // NOLINTNEXTLINE(bugprone-use-after-move): a moved-from Event refuses every use
  EXPECT_THROW((void)a.query(), cudakit::StateError);
  b.synchronize();
}

// Two processes: this one records an interprocess event behind a long kernel; the child opens
// the handle, sees the event pending, then waits for it.
TEST(EventGpu, IpcEventIsSharedWithAnotherProcess) {
  CUDAKIT_REQUIRE_GPU();
  Stream s;
  Event shared(EventFlags{.interprocess = true});
  cudakit::testing::launch_spin(s.handle(), 3'000'000'000ull);  // 3 s: the child starts meanwhile
  shared.record(s);
  const std::string command = cudakit::testing::bin_dir() + "/cudakit_ipc_event_child " +
                              shared.ipc_handle().to_hex();
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  // 0: pending at open, complete after synchronize. 3: already complete at open (too slow start).
  EXPECT_EQ(WEXITSTATUS(status), 0) << command;
  EXPECT_TRUE(shared.query());
}

}  // namespace
