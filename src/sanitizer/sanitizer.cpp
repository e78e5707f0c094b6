#include "cudakit/sanitizer/sanitizer.hpp"

#include <cstdlib>
#include <mutex>
#include <string>
#include <unordered_set>

#include "cudakit/core/error.hpp"
#include "cudakit/core/log.hpp"
#include "cudakit/core/trace_hooks.hpp"
#include "cudakit/sanitizer/sanitizer_error.hpp"

namespace cudakit::sanitizer {
namespace {

struct State {
  std::mutex mutex;
  std::optional<Detector> detector;
  Mode mode = Mode::throw_error;
  std::vector<RaceReport> reports;
  std::unordered_set<const char*> unchecked_logged;
  std::uint64_t listener = 0;
  bool attached = false;
};
State& state() {
  static State* s = new State;  // never destroyed: operations report until exit
  return *s;
}

void listen(const TraceEvent& event) {
  State& s = state();
  std::vector<RaceReport> found;
  Mode mode;
  const char* unchecked = nullptr;
  {
    std::lock_guard lock(s.mutex);
    if (!s.detector) return;
    found = s.detector->on_event(event);
    mode = s.mode;
    s.reports.insert(s.reports.end(), found.begin(), found.end());
    if (event.kind == TraceEventKind::kernel_launch && !event.accesses_declared && event.name &&
        s.unchecked_logged.insert(event.name).second) {
      unchecked = event.name;
    }
  }
  if (unchecked) {
    CUDAKIT_LOG(warning, "sanitizer: kernel '", unchecked,
                "' is launched without declared accesses and is not checked (launch it with cudakit::launch and "
                "its accesses)");
  }
  if (found.empty()) return;
  if (mode == Mode::throw_error) throw SanitizerError(std::move(found.front()));
  for (const RaceReport& r : found) CUDAKIT_LOG(warning, r.to_string());
  if (mode == Mode::abort) std::abort();
}

// CUDAKIT_SANITIZER (and CUDAKIT_SANITIZER_STACKS), read when the library loads.
[[maybe_unused]] const bool g_enabled_from_environment = [] {
  const char* value = std::getenv("CUDAKIT_SANITIZER");
  if (!value) return false;
  try {
    if (const std::optional<Mode> mode = parse_mode(value)) {
      DetectorOptions options;
      if (const char* stacks = std::getenv("CUDAKIT_SANITIZER_STACKS")) options.stacks = parse_stack_capture(stacks);
      enable(*mode, options);
      return true;
    }
  } catch (const std::exception& e) {
    CUDAKIT_LOG(error, "CUDAKIT_SANITIZER ignored: ", e.what());
  }
  return false;
}();

}  // namespace

std::optional<Mode> parse_mode(std::string_view value) {
  if (value.empty() || value == "0") return std::nullopt;
  if (value == "1" || value == "throw") return Mode::throw_error;
  if (value == "log") return Mode::log;
  if (value == "abort") return Mode::abort;
  throw InvalidArgumentError("CUDAKIT_SANITIZER", "'" + std::string(value) +
                                                      "' is not a mode: use 1 or throw, log, abort (0 or empty: off)");
}

void enable(Mode mode, DetectorOptions options) {
  if (mode != Mode::throw_error && mode != Mode::log && mode != Mode::abort) {
    throw InvalidArgumentError("sanitizer::enable",
                               "mode " + std::to_string(static_cast<int>(mode)) + " is not throw_error, log or abort");
  }
  State& s = state();
  std::lock_guard lock(s.mutex);
  s.mode = mode;
  if (!s.detector) {
    s.detector.emplace(options);
    s.reports.clear();
  }
  if (!s.attached) {
    s.listener = attach_trace_listener(listen);
    s.attached = true;
  }
}

void disable() noexcept {
  State& s = state();
  std::uint64_t listener = 0;
  {
    std::lock_guard lock(s.mutex);
    if (!s.attached) return;
    listener = s.listener;
    s.attached = false;
    s.detector.reset();
  }
  // Outside the lock: detaching waits for calls in progress, which take it.
  detach_trace_listener(listener);
}

bool enabled() noexcept {
  State& s = state();
  std::lock_guard lock(s.mutex);
  return s.attached;
}

std::vector<RaceReport> reports() {
  State& s = state();
  std::lock_guard lock(s.mutex);
  return s.reports;
}

DetectorStats stats() {
  State& s = state();
  std::lock_guard lock(s.mutex);
  return s.detector ? s.detector->stats() : DetectorStats{};
}

}  // namespace cudakit::sanitizer
