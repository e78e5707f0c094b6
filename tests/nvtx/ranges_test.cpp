// NVTX ranges: what reaches an NVTX tool (the suite's own, tests/nvtx/nvtx_injection_library.cpp,
// loaded in a child process through NVTX_INJECTION64_PATH) and what reaches the trace hooks.

#include "cudakit/nvtx/ranges.hpp"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cudakit/core/error.hpp"
#include "cudakit/core/trace_hooks.hpp"
#include "cudakit/nvtx/domain.hpp"
#include "cudakit/nvtx/registered_string.hpp"
#include "cudakit/nvtx/scoped_range.hpp"
#include "support/child_process.hpp"
#include "support/paths.hpp"

namespace {

namespace nvtx = cudakit::nvtx;
using cudakit::TraceEvent;
using cudakit::TraceEventKind;

constexpr const char* kToolChild = "nvtx_tool";

std::string injection_path() { return cudakit::testing::bin_dir() + "/libcudakit_test_nvtx_injection.so"; }

// What the tool recorded so far (the library is loaded by NVTX; RTLD_NOLOAD finds it).
std::string tool_log() {
  void* lib = dlopen(injection_path().c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (!lib) return "(the NVTX tool is not loaded)";
  using LogFn = const char* (*)();
  auto fn = reinterpret_cast<LogFn>(dlsym(lib, "cudakit_test_nvtx_log"));
  std::string log = fn ? fn() : "(no cudakit_test_nvtx_log)";
  dlclose(lib);
  return log;
}

void expect_line(const std::string& log, const std::string& line) {
  EXPECT_NE(log.find(line + "\n"), std::string::npos) << "missing line '" << line << "' in:\n" << log;
}

// Runs in the child, where NVTX_INJECTION64_PATH names the tool before the first NVTX call.
TEST(NvtxToolChild, EveryCallReachesTheTool) {
  if (cudakit::testing::child_mode() != kToolChild) GTEST_SKIP() << "runs as a child of NvtxTool.*";
  nvtx::name_category(3, "io");
  static const nvtx::RegisteredString kStep("train.step");
  nvtx::range_push("plain");
  nvtx::range_pop();
  { nvtx::ScopedRange range(kStep); }
  nvtx::range_push({.name = "with payload", .category = 3, .argb = 0xff00ff00u,
                    .payload = nvtx::Payload::of(std::uint64_t{12345})});
  nvtx::range_pop();
  nvtx::range_push({.name = "signed", .payload = nvtx::Payload::of(std::int64_t{-7})});
  nvtx::range_pop();
  nvtx::range_push({.name = "real", .payload = nvtx::Payload::of(2.5)});
  nvtx::range_pop();
  const nvtx::RangeId id = nvtx::range_start({.registered = &kStep, .category = 3});
  std::thread([id] { nvtx::range_end(id); }).join();
  nvtx::mark("checkpoint");
  nvtx::mark({.name = "counted", .payload = nvtx::Payload::of(std::int32_t{9})});

  const std::string log = tool_log();
  expect_line(log, "initialized");
  expect_line(log, "domain_create cudakit");
  expect_line(log, "name_category cudakit 3 io");
  expect_line(log, "register_string cudakit train.step");
  expect_line(log, "push cudakit ascii:plain category:0");
  expect_line(log, "push cudakit registered:train.step category:0");
  expect_line(log, "push cudakit ascii:with payload category:3 argb:4278255360 u64:12345");
  expect_line(log, "push cudakit ascii:signed category:0 i64:-7");
  expect_line(log, "push cudakit ascii:real category:0 f64:2.500000");
  expect_line(log, "start cudakit registered:train.step category:3 id:1");
  expect_line(log, "end cudakit id:1");
  expect_line(log, "mark cudakit ascii:checkpoint category:0");
  expect_line(log, "mark cudakit ascii:counted category:0 i32:9");
  // Five pushes, five pops: the scoped range pops too.
  std::size_t pops = 0;
  for (std::size_t at = log.find("pop cudakit\n"); at != std::string::npos; at = log.find("pop cudakit\n", at + 1)) ++pops;
  EXPECT_EQ(pops, 5u) << log;
}

TEST(NvtxTool, CallsReachAnInjectedTool) {
  const auto child = cudakit::testing::run_this_binary(
      "NvtxToolChild.*", {std::string(cudakit::testing::kChildVariable) + "=" + kToolChild,
                          "NVTX_INJECTION64_PATH=" + injection_path()});
  EXPECT_TRUE(child.passed()) << child.output;
}

// Without a tool (this process sets no injection variable) the calls return at once and the
// registered string has no handle, so ranges fall back to its text.
TEST(Nvtx, WithoutAToolRegisteredStringsHaveNoHandle) {
  const nvtx::RegisteredString name("no tool");
  EXPECT_EQ(name.handle(), nullptr);
  EXPECT_STREQ(name.text(), "no tool");
}

TEST(Nvtx, RangesReachTheTraceHooks) {
  std::mutex mutex;
  std::vector<std::pair<TraceEventKind, std::string>> seen;
  std::vector<std::uint64_t> ids;
  const auto listener = cudakit::attach_trace_listener([&](const TraceEvent& e) {
    std::lock_guard lock(mutex);
    seen.emplace_back(e.kind, e.name ? e.name : "");
    if (e.kind == TraceEventKind::range_start || e.kind == TraceEventKind::range_end) ids.push_back(e.range_id);
  });
  static const nvtx::RegisteredString kHot("hot");
  {
    nvtx::ScopedRange outer("outer");
    nvtx::range_push(kHot);
    nvtx::range_pop();
  }
  const nvtx::RangeId id = nvtx::range_start("async");
  nvtx::range_end(id);
  nvtx::mark("not reported");
  cudakit::detach_trace_listener(listener);

  const std::vector<std::pair<TraceEventKind, std::string>> expected{
      {TraceEventKind::range_push, "outer"}, {TraceEventKind::range_push, "hot"},
      {TraceEventKind::range_pop, ""},       {TraceEventKind::range_pop, ""},
      {TraceEventKind::range_start, "async"}, {TraceEventKind::range_end, ""}};
  EXPECT_EQ(seen, expected);
  ASSERT_EQ(ids.size(), 2u);
  EXPECT_EQ(ids[0], ids[1]);
}

TEST(Nvtx, AThrowingListenerDoesNotLeaveTheRange) {
  const auto listener = cudakit::attach_trace_listener([](const TraceEvent&) { throw std::runtime_error("no"); });
  EXPECT_NO_THROW({ nvtx::ScopedRange range("logged, not thrown"); });
  cudakit::detach_trace_listener(listener);
}

TEST(Nvtx, CategoryZeroAndNullNamesAreRefused) {
  try {
    nvtx::name_category(0, "zero");
    FAIL() << "category 0 was accepted";
  } catch (const cudakit::InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("category 0"), std::string::npos) << e.what();
  }
  EXPECT_THROW(nvtx::name_category(4, nullptr), cudakit::InvalidArgumentError);
}

}  // namespace
