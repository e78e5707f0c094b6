#pragma once
// @brief The library's logger: where cudakit's warnings go (a failed release in a destructor, an
// environment variable it ignored, CUPTI refusing a record), instead of raw writes to stderr.
//
//   CUDAKIT_LOG_LEVEL=debug|info|warning|error|off   (default: warning)
//   cudakit::set_log_sink([](const cudakit::LogRecord& r) { my_logger(r.level, r.message); });
//
// The default sink writes one line to stderr: "cudakit warning: message". A program replaces it
// with set_log_sink (servers route it to their own logger). Every member is thread-safe. A sink
// may be called from any thread, also concurrently, and from destructors during exit; it must not
// log itself (such a record is dropped). Checking whether a level is enabled costs one relaxed
// atomic load, so CUDAKIT_LOG builds its message only when it will be written.

#include <functional>
#include <source_location>
#include <string_view>

#include "cudakit/core/detail/concat.hpp"

namespace cudakit {

// A record's severity; a level is written when it is at least log_level(). `off` is a threshold
// only: it disables every record.
enum class LogLevel : int { debug = 0, info = 1, warning = 2, error = 3, off = 4 };
// @param level a level.
// @return its name as CUDAKIT_LOG_LEVEL spells it ("debug", ..., "off"), a static string.
[[nodiscard]] const char* to_string(LogLevel level) noexcept;

// One message handed to the log sink.
struct LogRecord {
  LogLevel level;  // its severity
  std::string_view message;  // valid during the sink's call only
  std::source_location location;  // where it was logged
};
// Where records go: called once per record that passes the level, from any thread.
using LogSink = std::function<void(const LogRecord&)>;

// The lowest level written: set_log_level's, else CUDAKIT_LOG_LEVEL's (read once; a value that
// is no level is reported once at warning level and ignored), else warning.
// @return the threshold now in force.
[[nodiscard]] LogLevel log_level() noexcept;
// Sets the threshold for every thread, overriding CUDAKIT_LOG_LEVEL.
// @param level the lowest level written from now on; `off` writes nothing.
void set_log_level(LogLevel level) noexcept;
// @param level a level.
// @return true when a record of `level` would be written (one relaxed atomic load).
[[nodiscard]] bool log_enabled(LogLevel level) noexcept;
// Replaces the sink and returns the previous one; an empty function restores the default.
// Once this returns, no call of the old sink is in progress or will start.
// @param sink the new sink; an empty function restores the default (stderr).
// @return the previous sink (empty when it was the default).
LogSink set_log_sink(LogSink sink);
// Writes `message` at `level` when the level is enabled. Never throws.
// @param level the record's severity.
// @param message the text; the sink sees it during its call only.
// @param location where the record comes from (the caller's by default).
void log(LogLevel level, std::string_view message,
         std::source_location location = std::source_location::current()) noexcept;

}  // namespace cudakit

// CUDAKIT_LOG(warning, "releasing ", what, " failed: ", e.what()): the parts are concatenated
// (detail::concat) only when `warning` is enabled.
#define CUDAKIT_LOG(level, ...)                                                            \
  do {                                                                                     \
    if (::cudakit::log_enabled(::cudakit::LogLevel::level)) [[unlikely]]                   \
      ::cudakit::log(::cudakit::LogLevel::level, ::cudakit::detail::concat(__VA_ARGS__),   \
                     ::std::source_location::current());                                   \
  } while (0)
