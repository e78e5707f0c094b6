// Host tier: the logger's levels, sinks and the warnings that go through it.

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cudakit/core/error.hpp"
#include "cudakit/core/log.hpp"
#include "support/captured_log.hpp"

namespace {

using cudakit::testing::CapturedLog;

TEST(Log, LevelsFilterAndTheMessageIsBuiltOnlyWhenWritten) {
  CapturedLog log;
  cudakit::set_log_level(cudakit::LogLevel::warning);
  int built = 0;
  const auto part = [&] {
    ++built;
    return "part";
  };
  CUDAKIT_LOG(info, "dropped ", part());
  EXPECT_EQ(built, 0) << "a disabled level must not build its message";
  CUDAKIT_LOG(warning, "kept ", part(), " ", 42);
  CUDAKIT_LOG(error, "also kept");
  ASSERT_EQ(log.records().size(), 2u);
  EXPECT_EQ(log.records()[0].first, cudakit::LogLevel::warning);
  EXPECT_EQ(log.records()[0].second, "kept part 42");
  EXPECT_EQ(log.records()[1].first, cudakit::LogLevel::error);
  cudakit::set_log_level(cudakit::LogLevel::off);
  CUDAKIT_LOG(error, "silenced");
  EXPECT_EQ(log.records().size(), 2u);
  cudakit::set_log_level(cudakit::LogLevel::debug);
  CUDAKIT_LOG(debug, "debug now");
  EXPECT_EQ(log.records().size(), 3u);
}

TEST(Log, WarnCudaGoesThroughTheSink) {
  CapturedLog log;
  cudakit::set_log_level(cudakit::LogLevel::warning);
  CUDAKIT_WARN_CUDA(cudaErrorInvalidValue);
  const auto records = log.records();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_NE(records[0].second.find("cudaErrorInvalidValue"), std::string::npos) << records[0].second;
}

TEST(Log, DefaultSinkWritesOneLineToStderr) {
  const cudakit::LogLevel before = cudakit::log_level();
  cudakit::set_log_level(cudakit::LogLevel::info);
  testing::internal::CaptureStderr();
  cudakit::log(cudakit::LogLevel::info, "hello from the test");
  const std::string err = testing::internal::GetCapturedStderr();
  cudakit::set_log_level(before);
  EXPECT_EQ(err, "cudakit info: hello from the test\n");
}

TEST(Log, ASinkThatLogsOrThrowsLosesOnlyItsOwnRecord) {
  CapturedLog outer;  // restores the default afterwards
  std::vector<std::string> seen;
  cudakit::set_log_level(cudakit::LogLevel::warning);
  cudakit::set_log_sink([&](const cudakit::LogRecord& r) {
    seen.emplace_back(r.message);
    CUDAKIT_LOG(error, "from inside the sink");  // dropped, not recursive
    throw std::runtime_error("sink failure");    // swallowed: log() never throws
  });
  EXPECT_NO_THROW(cudakit::log(cudakit::LogLevel::warning, "first"));
  EXPECT_NO_THROW(cudakit::log(cudakit::LogLevel::warning, "second"));
  EXPECT_EQ(seen, (std::vector<std::string>{"first", "second"}));
}

TEST(Log, ConcurrentLoggingAndSinkReplacement) {
  CapturedLog outer;
  cudakit::set_log_level(cudakit::LogLevel::warning);
  std::atomic<int> delivered{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> writers;
  for (int t = 0; t < 4; ++t) {
    writers.emplace_back([&] {
      while (!stop.load()) CUDAKIT_LOG(warning, "line");
    });
  }
  for (int i = 0; i < 200; ++i) {
    cudakit::set_log_sink([&](const cudakit::LogRecord&) { delivered.fetch_add(1); });
  }
  // After set_log_sink returns, the replaced sinks are never called again.
  cudakit::set_log_sink([](const cudakit::LogRecord&) {});
  const int settled = delivered.load();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(delivered.load(), settled);
  stop = true;
  for (auto& w : writers) w.join();
}

}  // namespace
