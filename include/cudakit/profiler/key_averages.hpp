#pragma once
// @brief key_averages: GPU time per operation name (kernels, memcpys, memsets), torch.profiler's
// `prof.key_averages().table(sort_by="cuda_time_total")` for C++.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cudakit/profiler/trace_events.hpp"

namespace cudakit::profiler {

struct KeyAverage {
  std::string name;
  std::uint64_t calls = 0;
  std::uint64_t total_ns = 0;
  std::uint64_t min_ns = 0;
  std::uint64_t max_ns = 0;
  [[nodiscard]] double average_ns() const noexcept {
    return calls == 0 ? 0.0 : static_cast<double>(total_ns) / static_cast<double>(calls);
  }
  double percent_of_total = 0.0;  // of all GPU operations' total time
};

// One row per distinct name, sorted by total time (largest first, then by name).
[[nodiscard]] std::vector<KeyAverage> key_averages(const TraceEvents& events);

// The rows as a fixed-width text table (name, calls, total, avg, min, max in µs, % of total);
// `row_limit` 0 prints every row. Long names are shortened with "..." in the middle.
[[nodiscard]] std::string key_averages_table(const std::vector<KeyAverage>& rows,
                                             std::size_t row_limit = 0);

}  // namespace cudakit::profiler
