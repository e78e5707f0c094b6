#include "cudakit/profiler/key_averages.hpp"

#include <algorithm>
#include <iomanip>
#include <sstream>
#include <unordered_map>

namespace cudakit::profiler {

std::vector<KeyAverage> key_averages(const TraceEvents& events) {
  std::vector<KeyAverage> rows;
  std::unordered_map<std::string_view, std::size_t> row_of;
  std::uint64_t total = 0;
  auto add = [&](std::string_view name, std::uint64_t start, std::uint64_t end) {
    const std::uint64_t ns = end > start ? end - start : 0;
    const auto [it, inserted] = row_of.try_emplace(name, rows.size());
    if (inserted) rows.push_back({std::string(name), 0, 0, ns, ns});
    KeyAverage& row = rows[it->second];
    ++row.calls;
    row.total_ns += ns;
    row.min_ns = std::min(row.min_ns, ns);
    row.max_ns = std::max(row.max_ns, ns);
    total += ns;
  };
  for (const KernelEvent& k : events.kernels) add(k.name, k.start_ns, k.end_ns);
  for (const MemoryOpEvent& op : events.memory_ops) add(op.name, op.start_ns, op.end_ns);
  for (KeyAverage& row : rows) {
    row.percent_of_total =
        total == 0 ? 0.0 : 100.0 * static_cast<double>(row.total_ns) / static_cast<double>(total);
  }
  std::sort(rows.begin(), rows.end(), [](const KeyAverage& a, const KeyAverage& b) {
    return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.name < b.name;
  });
  return rows;
}

namespace {

constexpr std::size_t kNameWidth = 60;

std::string shorten(const std::string& name) {
  if (name.size() <= kNameWidth) return name;
  const std::size_t keep = (kNameWidth - 3) / 2;
  return name.substr(0, keep) + "..." + name.substr(name.size() - (kNameWidth - 3 - keep));
}

}  // namespace

std::string key_averages_table(const std::vector<KeyAverage>& rows, std::size_t row_limit) {
  std::ostringstream out;
  out << std::left << std::setw(kNameWidth) << "Name" << std::right << std::setw(8) << "Calls"
      << std::setw(14) << "Total (us)" << std::setw(12) << "Avg (us)" << std::setw(12)
      << "Min (us)" << std::setw(12) << "Max (us)" << std::setw(9) << "% total" << "\n"
      << std::string(kNameWidth + 8 + 14 + 12 * 3 + 9, '-') << "\n"
      << std::fixed;
  const std::size_t shown = row_limit == 0 ? rows.size() : std::min(row_limit, rows.size());
  std::uint64_t total_ns = 0;
  for (const KeyAverage& row : rows) total_ns += row.total_ns;
  for (std::size_t i = 0; i < shown; ++i) {
    const KeyAverage& row = rows[i];
    out << std::left << std::setw(kNameWidth) << shorten(row.name) << std::right << std::setw(8)
        << row.calls << std::setprecision(3) << std::setw(14) << row.total_ns / 1e3
        << std::setw(12) << row.average_ns() / 1e3 << std::setw(12) << row.min_ns / 1e3
        << std::setw(12) << row.max_ns / 1e3 << std::setprecision(2) << std::setw(8)
        << row.percent_of_total << "%\n";
  }
  if (shown < rows.size()) out << "... " << rows.size() - shown << " more rows\n";
  out << std::setprecision(3) << "GPU time total: " << total_ns / 1e3 << " us\n";
  return out.str();
}

}  // namespace cudakit::profiler
