#pragma once
// @brief key_averages: GPU time per operation name (kernels, memcpys, memsets), torch.profiler's
// `prof.key_averages().table(sort_by="cuda_time_total")` for C++.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cudakit/profiler/trace_events.hpp"

namespace cudakit::profiler {

// GPU time of one operation name, over all its calls (one row of key_averages).
struct KeyAverage {
  std::string name;          // the kernel's, memcpy's or memset's name
  std::uint64_t calls = 0;     // how many ran
  std::uint64_t total_ns = 0;  // their summed device time
  std::uint64_t min_ns = 0;    // the shortest one
  std::uint64_t max_ns = 0;    // the longest one
  // @return total_ns / calls; 0 for no calls.
  [[nodiscard]] double average_ns() const noexcept {
    return calls == 0 ? 0.0 : static_cast<double>(total_ns) / static_cast<double>(calls);
  }
  double percent_of_total = 0.0;  // of all GPU operations' total time
};

// One row per distinct name, sorted by total time (largest first, then by name).
// @param events the recorded events (kernels, memcpys and memsets are counted).
// @return the rows.
[[nodiscard]] std::vector<KeyAverage> key_averages(const TraceEvents& events);

// The rows as a fixed-width text table (name, calls, total, avg, min, max in µs, % of total);
// `row_limit` 0 prints every row. Long names are shortened with "..." in the middle.
// @param rows the rows, as key_averages() gives them.
// @param row_limit the most rows printed; 0 for all.
// @return the table, one line per row after a header.
[[nodiscard]] std::string key_averages_table(const std::vector<KeyAverage>& rows,
                                             std::size_t row_limit = 0);

}  // namespace cudakit::profiler
