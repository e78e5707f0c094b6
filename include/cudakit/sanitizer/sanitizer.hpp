#pragma once
// @brief The stream sanitizer: finds, while a program runs, cross-stream races (read-after-write,
// write-after-read, write-after-write on overlapping byte ranges), frees of memory another
// stream still uses without record_stream, uses after free and reads of memory nothing wrote,
// in everything cudakit issues (tensor ops, copies, memsets, collectives, the allocator, graph
// replays, and users' kernels launched with cudakit::launch and their declared accesses).
// torch.cuda._sanitizer for C++, over byte ranges rather than pointers.
//
//   CUDAKIT_SANITIZER=1 ./program          (or: throw, log, abort)
//   CUDAKIT_SANITIZER_STACKS=unwind        (how stacks are captured: fp, the default; unwind; off)
//   cudakit::sanitizer::enable(cudakit::sanitizer::Mode::log);
//
// It listens on core's trace hooks (See Note [Runtime trace hooks]): operations made with raw
// CUDA calls are not seen, and launches without declared accesses are counted as unchecked
// (stats().unchecked_launches) and logged once per kernel.
//
// Stream ordering: the sanitizer models it rather than changing it. Each operation is checked on
// the host when it is queued, against what the streams' events and waits order before it; it
// queues nothing and synchronizes nothing.

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "cudakit/sanitizer/detector.hpp"
#include "cudakit/sanitizer/race_report.hpp"

namespace cudakit::sanitizer {

// What the sanitizer does with a hazard it finds.
enum class Mode : std::uint8_t {
  throw_error,  // the operation is refused with SanitizerError before it is queued (frees and
                // destructions, which cannot throw, log instead)
  log,          // each report is logged (CUDAKIT_LOG warning) and kept
  abort,        // the report is logged, then std::abort()
};

// Starts the sanitizer (a fresh model: what ran before is not known to it). Enabling again
// changes the mode and keeps the model. Thread-safe.
// @param mode what to do with each report.
// @param options the model's options; ignored when the sanitizer is already on (the model is
//        kept).
// @throws InvalidArgumentError for a mode that is not one of the three.
void enable(Mode mode = Mode::throw_error, DetectorOptions options = {});
// Stops it; reports found so far are kept until the next enable().
void disable() noexcept;
// Whether the sanitizer is checking operations now.
// @return true between enable() and disable().
[[nodiscard]] bool enabled() noexcept;

// Every report since enable(), in order. Thread-safe.
// @return a copy of the reports.
[[nodiscard]] std::vector<RaceReport> reports();
// What the sanitizer has seen since enable(): operations checked, launches it could not check
// (no declared accesses), reports.
// @return the counts; all zero while the sanitizer is disabled.
[[nodiscard]] DetectorStats stats();

// Parses CUDAKIT_SANITIZER's value: "1", "throw" -> throw_error; "log"; "abort"; "0" or "" -> off
// (nullopt).
// @param value the variable's value.
// @return the mode, or nullopt for off.
// @throws InvalidArgumentError naming the value and what it takes.
[[nodiscard]] std::optional<Mode> parse_mode(std::string_view value);

}  // namespace cudakit::sanitizer
