// The detector's reports (what they name), its bookkeeping (unchecked launches, shadow ranges),
// and the sanitizer switched on through the real trace hooks in its three modes.

#include "cudakit/sanitizer/detector.hpp"

#include <gtest/gtest.h>

#include <string>
#include <thread>

#include "cudakit/core/error.hpp"
#include "cudakit/core/trace_hooks.hpp"
#include "cudakit/sanitizer/sanitizer.hpp"
#include "cudakit/sanitizer/sanitizer_error.hpp"
#include "sanitizer/event_program.hpp"
#include "support/child_process.hpp"

using cudakit::sanitizer::Detector;
using cudakit::sanitizer::HazardKind;
using cudakit::sanitizer::RaceReport;
using cudakit::testing::buffer;
using cudakit::testing::event;
using cudakit::testing::EventProgram;
using cudakit::testing::rd;
using cudakit::testing::stream;
using cudakit::testing::wr;

namespace cudakit::testing {

// Outside an anonymous namespace, so that its name is exported and appears in captured stacks.
[[gnu::noinline]] std::vector<RaceReport> run_with_stacks(const EventProgram& p,
                                                         sanitizer::StackCapture stacks) {
  Detector detector({.stacks = stacks, .uninitialized_reads = false});
  return p.run(detector);
}

}  // namespace cudakit::testing

namespace {

constexpr std::size_t N = 4096;

bool stack_names(const cudakit::memory::StackFrames& stack, const std::string& part) {
  for (const auto& f : stack) {
    if (f.name.find(part) != std::string::npos) return true;
  }
  return false;
}

TEST(SanitizerReport, NamesBothAccessesTheOverlapAndTheAllocation) {
  char* b = buffer(0);
  EventProgram p;
  p.alloc(stream(0), b, N).kernel(stream(0), {wr(b, 2048, "y")}, "producer");
  p.kernel(stream(1), {rd(b + 1024, 2048, "x")}, "consumer");
  using cudakit::sanitizer::StackCapture;
  for (const StackCapture stacks : {StackCapture::frame_pointers, StackCapture::unwinder}) {
    const auto reports = cudakit::testing::run_with_stacks(p, stacks);
    ASSERT_EQ(reports.size(), 1u);
    const RaceReport& r = reports[0];
    EXPECT_EQ(r.kind, HazardKind::read_after_write);
    EXPECT_EQ(r.current.name, "consumer");
    EXPECT_EQ(r.current.argument, "x");
    EXPECT_EQ(r.current.stream, stream(1));
    EXPECT_EQ(r.current.begin, reinterpret_cast<std::uintptr_t>(b + 1024));
    EXPECT_EQ(r.current.bytes, 2048u);
    ASSERT_TRUE(r.previous.has_value());
    EXPECT_EQ(r.previous->name, "producer");
    EXPECT_EQ(r.previous->argument, "y");
    EXPECT_EQ(r.previous->stream, stream(0));
    EXPECT_EQ(r.previous->mode, cudakit::MemoryAccess::Mode::write);
    EXPECT_LT(r.previous->operation_id, r.current.operation_id);
    // Only the bytes both touch.
    EXPECT_EQ(r.overlap_begin, reinterpret_cast<std::uintptr_t>(b + 1024));
    EXPECT_EQ(r.overlap_bytes, 1024u);
    ASSERT_TRUE(r.allocation.has_value());
    EXPECT_EQ(r.allocation->begin, reinterpret_cast<std::uintptr_t>(b));
    EXPECT_EQ(r.allocation->bytes, N);
    EXPECT_EQ(r.allocation->stream, stream(0));
    // Stacks: symbolized, without the sanitizer's own frames, reaching the caller.
    EXPECT_TRUE(stack_names(r.current.stack, "run_with_stacks")) << r.to_string();
    EXPECT_TRUE(stack_names(r.previous->stack, "run_with_stacks")) << r.to_string();
    EXPECT_TRUE(stack_names(r.allocation->stack, "run_with_stacks")) << r.to_string();
    for (const auto& f : r.current.stack) EXPECT_FALSE(f.name.starts_with("cudakit::sanitizer::")) << f.name;
    const std::string text = r.to_string();
    for (const char* part : {"read-after-write", "consumer", "producer", "'x'", "'y'", "allocated: operation #"}) {
      EXPECT_NE(text.find(part), std::string::npos) << part << " missing in\n" << text;
    }
  }
}

TEST(SanitizerReport, OnePairOfOperationsIsOneReportOverAllItsBytes) {
  char* b = buffer(0);
  EventProgram p;
  // Three segments (the middle one written separately first), one conflicting pair.
  p.alloc(stream(0), b, N).kernel(stream(0), {wr(b, N)}).kernel(stream(0), {wr(b + 100, 100)});
  p.kernel(stream(1), {rd(b, N)});
  const auto reports = p.run();
  ASSERT_EQ(reports.size(), 2u);  // the two writes are two operations
  for (const auto& r : reports) EXPECT_EQ(r.kind, HazardKind::read_after_write);
  // The first write's report spans both its ranges (the bytes from the first to the last).
  EXPECT_EQ(reports[0].overlap_begin, reinterpret_cast<std::uintptr_t>(b));
  EXPECT_EQ(reports[0].overlap_bytes, N);
  EXPECT_EQ(reports[1].overlap_begin, reinterpret_cast<std::uintptr_t>(b + 100));
  EXPECT_EQ(reports[1].overlap_bytes, 100u);
}

TEST(SanitizerReport, FreeWhileInUseNamesTheFreeAndTheUse) {
  char* b = buffer(0);
  EventProgram p;
  p.alloc(stream(0), b, N).kernel(stream(0), {wr(b, N)}).record(event(0), stream(0)).wait(stream(1), event(0));
  p.kernel(stream(1), {rd(b, N, "weights")}, "reader").free(b, N);
  const auto reports = p.run();
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].kind, HazardKind::free_while_in_use);
  EXPECT_EQ(reports[0].current.kind, cudakit::TraceEventKind::free);
  EXPECT_EQ(reports[0].current.stream, stream(0));
  ASSERT_TRUE(reports[0].previous);
  EXPECT_EQ(reports[0].previous->name, "reader");
  EXPECT_EQ(reports[0].previous->argument, "weights");
  EXPECT_NE(reports[0].to_string().find("record_stream"), std::string::npos);
}

TEST(SanitizerDetector, UndeclaredLaunchesAreCountedAsUnchecked) {
  EventProgram p;
  p.undeclared_kernel(stream(0), "raw_a").undeclared_kernel(stream(0), "raw_a").undeclared_kernel(stream(1), "raw_b");
  p.kernel(stream(0), {wr(buffer(0), N)});
  Detector d({.stacks = cudakit::sanitizer::StackCapture::off});
  EXPECT_TRUE(p.run(d).empty());
  EXPECT_EQ(d.stats().unchecked_launches, 3u);
  EXPECT_EQ(d.stats().operations, 4u);
  EXPECT_EQ(d.unchecked_kernels().size(), 2u);
}

TEST(SanitizerDetector, ABufferUsedWholeStaysOneRange) {
  EventProgram p;
  p.alloc(stream(0), buffer(0), N);
  for (int i = 0; i < 100; ++i) {
    p.kernel(stream(0), {wr(buffer(0), N / 4)}).kernel(stream(0), {wr(buffer(0) + N / 4, 3 * N / 4)});
    p.kernel(stream(0), {wr(buffer(0), N)});
  }
  Detector d({.stacks = cudakit::sanitizer::StackCapture::off});
  EXPECT_TRUE(p.run(d).empty());
  EXPECT_EQ(d.stats().shadow_ranges, 1u);
}

TEST(SanitizerDetector, UninitializedReadsCanBeTurnedOff) {
  EventProgram p;
  p.alloc(stream(0), buffer(0), N).kernel(stream(0), {rd(buffer(0), N)});
  EXPECT_EQ(p.run().size(), 1u);
  EXPECT_TRUE(p.run({.stacks = cudakit::sanitizer::StackCapture::off, .uninitialized_reads = false}).empty());
}

TEST(SanitizerDetector, ARaceIsReportedOnceThenTheWriteIsTracked) {
  EventProgram p;
  p.alloc(stream(0), buffer(0), N).kernel(stream(0), {wr(buffer(0), N)}).kernel(stream(1), {wr(buffer(0), N)});
  p.kernel(stream(1), {rd(buffer(0), N)});  // after s1's own write: fine
  const auto reports = p.run();
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].kind, HazardKind::write_after_write);
}

TEST(SanitizerDetector, ReplaysAreCountedAndEachReplayIsChecked) {
  EventProgram p;
  p.alloc(stream(0), buffer(0), N).capture_begin(stream(0), 7).kernel(stream(0), {wr(buffer(0), N)});
  p.capture_end(stream(0), 7);
  p.replay(7, stream(1)).sync_stream(stream(1)).replay(7, stream(1)).kernel(stream(2), {rd(buffer(0), N)});
  Detector d({.stacks = cudakit::sanitizer::StackCapture::off});
  const auto reports = p.run(d);
  EXPECT_EQ(d.stats().replayed_operations, 2u);
  ASSERT_EQ(reports.size(), 1u);  // the second replay's write, unordered with stream 2's read
  EXPECT_EQ(reports[0].kind, HazardKind::read_after_write);
  // Nothing captured runs at capture time: the capture itself reported nothing.
  EXPECT_EQ(d.stats().operations, 3u);
}

// --- the sanitizer on the real trace hooks ---

void emit(const EventProgram& p) {
  for (const auto& e : p.events()) cudakit::detail::emit_trace_event(e);
}

EventProgram racy_program() {
  EventProgram p;
  p.alloc(stream(0), buffer(3), N).kernel(stream(0), {wr(buffer(3), N)});
  p.kernel(stream(1), {rd(buffer(3), N)}, "racy_reader");
  return p;
}

TEST(Sanitizer, ThrowModeRefusesTheOperationWithTheReport) {
  cudakit::sanitizer::enable(cudakit::sanitizer::Mode::throw_error, {.stacks = cudakit::sanitizer::StackCapture::off});
  EXPECT_TRUE(cudakit::sanitizer::enabled());
  try {
    emit(racy_program());
    cudakit::sanitizer::disable();
    FAIL() << "the race was not refused";
  } catch (const cudakit::sanitizer::SanitizerError& e) {
    EXPECT_EQ(e.report().kind, HazardKind::read_after_write);
    EXPECT_EQ(e.report().current.name, "racy_reader");
    EXPECT_NE(std::string(e.what()).find("racy_reader"), std::string::npos);
  }
  EXPECT_EQ(cudakit::sanitizer::reports().size(), 1u);
  cudakit::sanitizer::disable();
  EXPECT_FALSE(cudakit::sanitizer::enabled());
  EXPECT_FALSE(cudakit::trace_hooks_active());
}

TEST(Sanitizer, LogModeKeepsGoingAndKeepsTheReports) {
  cudakit::sanitizer::enable(cudakit::sanitizer::Mode::log, {.stacks = cudakit::sanitizer::StackCapture::off});
  EXPECT_NO_THROW(emit(racy_program()));
  const auto reports = cudakit::sanitizer::reports();
  cudakit::sanitizer::disable();
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].current.name, "racy_reader");
  // Kept after disable, dropped by the next enable.
  EXPECT_EQ(cudakit::sanitizer::reports().size(), 1u);
  cudakit::sanitizer::enable(cudakit::sanitizer::Mode::log);
  EXPECT_TRUE(cudakit::sanitizer::reports().empty());
  cudakit::sanitizer::disable();
}

TEST(Sanitizer, AbortModeAborts) {
  EXPECT_DEATH(
      {
        cudakit::sanitizer::enable(cudakit::sanitizer::Mode::abort, {.stacks = cudakit::sanitizer::StackCapture::off});
        emit(racy_program());
      },
      "read-after-write");
}

TEST(Sanitizer, ModesParseAndABadOneIsNamed) {
  using cudakit::sanitizer::Mode;
  EXPECT_EQ(cudakit::sanitizer::parse_mode("1"), Mode::throw_error);
  EXPECT_EQ(cudakit::sanitizer::parse_mode("throw"), Mode::throw_error);
  EXPECT_EQ(cudakit::sanitizer::parse_mode("log"), Mode::log);
  EXPECT_EQ(cudakit::sanitizer::parse_mode("abort"), Mode::abort);
  EXPECT_EQ(cudakit::sanitizer::parse_mode("0"), std::nullopt);
  EXPECT_EQ(cudakit::sanitizer::parse_mode(""), std::nullopt);
  try {
    (void)cudakit::sanitizer::parse_mode("loud");
    FAIL() << "'loud' was accepted";
  } catch (const cudakit::InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("'loud'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("abort"), std::string::npos) << e.what();
  }
  EXPECT_THROW(cudakit::sanitizer::enable(static_cast<Mode>(9)), cudakit::InvalidArgumentError);
  EXPECT_FALSE(cudakit::sanitizer::enabled());
}

TEST(Sanitizer, StackCapturesParseAndABadOneIsNamed) {
  using cudakit::sanitizer::StackCapture;
  EXPECT_EQ(cudakit::sanitizer::parse_stack_capture("fp"), StackCapture::frame_pointers);
  EXPECT_EQ(cudakit::sanitizer::parse_stack_capture(""), StackCapture::frame_pointers);
  EXPECT_EQ(cudakit::sanitizer::parse_stack_capture("unwind"), StackCapture::unwinder);
  EXPECT_EQ(cudakit::sanitizer::parse_stack_capture("off"), StackCapture::off);
  EXPECT_EQ(cudakit::sanitizer::parse_stack_capture("0"), StackCapture::off);
  try {
    (void)cudakit::sanitizer::parse_stack_capture("dwarf");
    FAIL() << "'dwarf' was accepted";
  } catch (const cudakit::InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("'dwarf'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("unwind"), std::string::npos) << e.what();
  }
}

TEST(SanitizerDetector, EachDistinctStackIsKeptOnce) {
  char* b = buffer(0);
  EventProgram p;
  p.alloc(stream(0), b, N);
  for (int i = 0; i < 100; ++i) p.kernel(stream(0), {wr(b, N)});  // one call site: one stack
  Detector d({.stacks = cudakit::sanitizer::StackCapture::frame_pointers});
  (void)p.run(d);
  // The allocation's and the kernels' (EventProgram::run issues each kind from its own line).
  EXPECT_LE(d.stats().stacks, 3u);
  EXPECT_GE(d.stats().stacks, 1u);
  EXPECT_EQ(d.stats().operations, 100u);
  Detector without({.stacks = cudakit::sanitizer::StackCapture::off});
  (void)p.run(without);
  EXPECT_EQ(without.stats().stacks, 0u);
}

TEST(SanitizerThreads, OperationsFromManyThreadsAreSerialized) {
  cudakit::sanitizer::enable(cudakit::sanitizer::Mode::log, {.stacks = cudakit::sanitizer::StackCapture::off});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t] {
      // Each thread its own stream and buffer: no races, only concurrent reporting.
      EventProgram p;
      p.alloc(stream(10 + t), buffer(10 + t), N);
      for (int i = 0; i < 200; ++i) p.kernel(stream(10 + t), {cudakit::testing::rw(buffer(10 + t), N)});
      p.kernel(stream(10 + t), {wr(buffer(10 + t), N)}).free(buffer(10 + t), N);
      emit(p);
    });
  }
  for (auto& t : threads) t.join();
  const auto stats = cudakit::sanitizer::stats();
  const auto reports = cudakit::sanitizer::reports();
  cudakit::sanitizer::disable();
  EXPECT_EQ(stats.operations, 4u * 201u);
  EXPECT_TRUE(reports.empty());
}

constexpr const char* kEnvChild = "sanitizer_env";

TEST(SanitizerEnvChild, VariableEnablesLogMode) {
  if (cudakit::testing::child_mode() != kEnvChild) GTEST_SKIP() << "runs as a child of SanitizerEnv.*";
  ASSERT_TRUE(cudakit::sanitizer::enabled());
  EXPECT_NO_THROW(emit(racy_program()));  // log mode: reported, not thrown
  EXPECT_EQ(cudakit::sanitizer::reports().size(), 1u);
}

TEST(SanitizerEnv, CudakitSanitizerVariableEnablesIt) {
  const auto child = cudakit::testing::run_this_binary(
      "SanitizerEnvChild.*", {std::string(cudakit::testing::kChildVariable) + "=" + kEnvChild, "CUDAKIT_SANITIZER=log"});
  EXPECT_TRUE(child.passed()) << child.output;
  EXPECT_NE(child.output.find("read-after-write"), std::string::npos) << child.output;
}

}  // namespace
