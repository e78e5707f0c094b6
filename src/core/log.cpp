#include "cudakit/core/log.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <shared_mutex>
#include <string>

namespace cudakit {
namespace {

constexpr int kLevelUnread = -1;
std::atomic<int> g_level{kLevelUnread};

// The sink and the lock that lets set_log_sink wait out calls in progress. Leaked on purpose:
// destructors of other statics log during exit.
struct SinkState {
  std::shared_mutex mutex;
  LogSink sink;
};
SinkState& sink_state() {
  static SinkState* state = new SinkState;
  return *state;
}

// A sink that logs would call itself (or deadlock on the lock): such records are dropped.
thread_local bool t_in_sink = false;

void write_to_stderr(const LogRecord& record) {
  std::fprintf(stderr, "cudakit %s: %.*s\n", to_string(record.level),
               static_cast<int>(record.message.size()), record.message.data());
}

bool parse_level(std::string_view text, LogLevel& level) {
  for (LogLevel candidate : {LogLevel::debug, LogLevel::info, LogLevel::warning, LogLevel::error,
                             LogLevel::off}) {
    if (text == to_string(candidate)) {
      level = candidate;
      return true;
    }
  }
  return false;
}

int read_level_once() {
  static const int level = [] {
    LogLevel parsed = LogLevel::warning;
    const char* text = std::getenv("CUDAKIT_LOG_LEVEL");
    const bool bad = text != nullptr && *text != '\0' && !parse_level(text, parsed);
    int expected = kLevelUnread;
    g_level.compare_exchange_strong(expected, static_cast<int>(parsed));
    if (bad) {
      log(LogLevel::warning, detail::concat("CUDAKIT_LOG_LEVEL='", text,
                                            "' is not one of debug, info, warning, error, off; "
                                            "logging at warning"));
    }
    return static_cast<int>(parsed);
  }();
  return level;
}

int current_level() noexcept {
  const int level = g_level.load(std::memory_order_relaxed);
  return level != kLevelUnread ? level : read_level_once();
}

}  // namespace

const char* to_string(LogLevel level) noexcept {
  switch (level) {
    case LogLevel::debug: return "debug";
    case LogLevel::info: return "info";
    case LogLevel::warning: return "warning";
    case LogLevel::error: return "error";
    case LogLevel::off: return "off";
  }
  return "unknown";
}

LogLevel log_level() noexcept { return static_cast<LogLevel>(current_level()); }

void set_log_level(LogLevel level) noexcept {
  (void)current_level();  // the environment is read first, so it never overrides this call
  g_level.store(static_cast<int>(level), std::memory_order_relaxed);
}

bool log_enabled(LogLevel level) noexcept {
  return level != LogLevel::off && static_cast<int>(level) >= current_level();
}

LogSink set_log_sink(LogSink sink) {
  SinkState& state = sink_state();
  std::unique_lock lock(state.mutex);
  LogSink previous = std::move(state.sink);
  state.sink = std::move(sink);
  return previous;
}

void log(LogLevel level, std::string_view message, std::source_location location) noexcept {
  if (!log_enabled(level) || t_in_sink) return;
  const LogRecord record{level, message, location};
  SinkState& state = sink_state();
  t_in_sink = true;
  try {
    std::shared_lock lock(state.mutex);
    if (state.sink) state.sink(record);
    else write_to_stderr(record);
  } catch (...) {
    // A sink that throws loses its record; the caller (often a destructor) must not see it.
  }
  t_in_sink = false;
}

}  // namespace cudakit
