#pragma once
// `cudakit top`'s view of one moment: the table it draws and the JSON it prints, made from a
// snapshot (so that both are tested without a GPU, from snapshots made by hand).

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <vector>

#include "cudakit/core/device_telemetry.hpp"

namespace cudakit::cli {

struct TopSnapshot {
  std::string taken_at;  // UTC, ISO 8601 ("2026-12-01T14:58:03Z")
  std::vector<DeviceTelemetry> devices;
};

// One GPU's memory told apart: what processes with libcudakit loaded use, and the rest of
// what is used (other processes, those whose maps cannot be read, and the driver's own).
struct MemorySplit {
  std::size_t cudakit = 0;
  std::size_t others = 0;
};
[[nodiscard]] MemorySplit split_memory(const DeviceTelemetry& device);

// The table: one block per GPU (utilization, memory busy, temperature, power, SM clock, memory
// used by cudakit processes and by others) and its processes beneath it.
[[nodiscard]] std::string render_top(const TopSnapshot& snapshot);

// The JSON form (the schema is in docs/cli.md, `cudakit top`).
[[nodiscard]] nlohmann::json top_json(const TopSnapshot& snapshot);

}  // namespace cudakit::cli
