// `cudakit top`: a live view of every GPU of the machine, read through NVML.

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

#include "command.hpp"
#include "cudakit/core/telemetry.hpp"
#include "errors.hpp"
#include "top_view.hpp"

namespace cudakit::cli {
namespace {

struct TopOptions {
  bool once = false;
  bool json = false;
  double interval = 1.0;  // seconds
};

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

int run_top(const TopOptions& o) {
  // ANSI: cursor home, then clear the screen; the next frame is drawn over the last.
  constexpr const char* kRedraw = "\x1b[H\x1b[2J";
  const auto interval = std::chrono::duration<double>(o.interval);
  for (;;) {
    const TopSnapshot snapshot{utc_now(), read_device_telemetry()};
    if (o.json) {
      std::cout << top_json(snapshot).dump() << "\n";
    } else {
      if (!o.once) std::cout << kRedraw;
      std::cout << render_top(snapshot);
      if (!o.once) std::cout << "every " << o.interval << " s; Ctrl-C quits\n";
    }
    // A refresh nobody can read (a closed pipe, a full disk) ends the loop as a failure.
    errno = 0;
    if (!std::cout.flush()) {
      throw std::runtime_error(std::string("cannot write to standard output") +
                               (errno != 0 ? std::string(": ") + std::strerror(errno) : std::string()));
    }
    if (o.once) return 0;
    std::this_thread::sleep_for(interval);
  }
}

const RegisterCommand kTop(
    "top",
    "a live view of every GPU: utilization, memory (by cudakit processes and by others), power, "
    "clocks, temperature",
    [](CLI::App& command) -> std::function<int()> {
      auto options = std::make_shared<TopOptions>();
      command.footer(
          "Memory is told apart by process: a process NVML lists on the GPU counts as cudakit's "
          "when its /proc/<pid>/maps maps libcudakit (a program linked statically with cudakit "
          "counts as another's; one whose maps this user may not read is 'unknown' and counts "
          "with the others). NVML comes with the NVIDIA driver; without it top fails, saying "
          "why.");
      command.add_flag("--once", options->once, "print one view and exit");
      command.add_flag("--json", options->json,
                       "print JSON instead of the table: one object a line, each refresh "
                       "(the schema is in docs/cli.md)");
      command.add_option("--interval", options->interval, "seconds between refreshes")
          ->capture_default_str()
          ->check(number_in("seconds", 0.1, 3600));
      return [options] { return run_top(*options); };
    });

}  // namespace
}  // namespace cudakit::cli
