#pragma once
// CapturedLog: the log records written while it lives, for tests that check warnings.
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "cudakit/core/log.hpp"

namespace cudakit::testing {

// Installs a sink that keeps every record, and restores the previous sink and level after.
class CapturedLog {
 public:
  CapturedLog() : previous_level_(cudakit::log_level()) {
    previous_ = cudakit::set_log_sink([this](const cudakit::LogRecord& r) {
      std::lock_guard lock(mutex_);
      records_.push_back({r.level, std::string(r.message)});
    });
  }
  ~CapturedLog() {
    cudakit::set_log_sink(std::move(previous_));
    cudakit::set_log_level(previous_level_);
  }
  std::vector<std::pair<cudakit::LogLevel, std::string>> records() {
    std::lock_guard lock(mutex_);
    return records_;
  }

 private:
  cudakit::LogLevel previous_level_;
  cudakit::LogSink previous_;
  std::mutex mutex_;
  std::vector<std::pair<cudakit::LogLevel, std::string>> records_;
};

}  // namespace cudakit::testing
