// The statistics as the table torch.cuda.memory_summary() prints: CachingAllocator::summary(),
// and the device-wide allocator's other backends (See Note [Allocator backends]).

#include <algorithm>
#include <iomanip>
#include <sstream>
#include <string>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/memory/caching_allocator.hpp"
#include "memory/detail/allocator_backend.hpp"
#include "memory/detail/format_bytes.hpp"

namespace cudakit::memory {

std::string CachingAllocator::summary() const { return detail::format_memory_summary(stats(), device(), config().to_string()); }

std::string detail::format_memory_summary(const MemoryStats& m, int device, std::string_view settings) {
  std::ostringstream out;
  const std::string rule(83, '=');
  const std::string thin(83, '-');
  out << rule << "\n"
      << "|                  cudakit memory summary, device " << std::setw(2) << device
      << "                                |\n"
      << "|  " << std::left << std::setw(79)
      << cudakit::detail::concat("OOMs: ", m.num_ooms, "    cache flushes/retries: ", m.num_alloc_retries,
                                 "    config: ", settings)
      << "|\n"
      << rule << "\n"
      << "|        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  |\n"
      << thin << "\n";
  auto row = [&](const char* name, const StatArray& a, bool bytes) {
    static const char* const kPools[] = {"all", "from large pool", "from small pool"};
    const int order[] = {0, 2, 1};
    for (int k = 0; k < 3; ++k) {
      const Stat& s = a[order[k]];
      auto cell = [&](std::int64_t v) {
        return bytes ? format_bytes(static_cast<std::size_t>(std::max<std::int64_t>(v, 0)))
                     : std::to_string(v);
      };
      out << "| " << std::left << std::setw(22)
          << (k == 0 ? std::string(name) : std::string("      ") + kPools[k]) << "| "
          << std::right << std::setw(10) << cell(s.current) << " | " << std::setw(10) << cell(s.peak)
          << " | " << std::setw(10) << cell(s.allocated) << " | " << std::setw(10) << cell(s.freed)
          << " |\n";
    }
    out << thin << "\n";
  };
  row("Allocated memory", m.allocated_bytes, true);
  row("Active memory", m.active_bytes, true);
  row("Requested memory", m.requested_bytes, true);
  row("Reserved memory", m.reserved_bytes, true);
  row("Non-releasable memory", m.inactive_split_bytes, true);
  row("Allocations", m.allocation, false);
  row("Active allocs", m.active, false);
  row("Segments (chunks)", m.segment, false);
  row("Non-releasable allocs", m.inactive_split, false);
  out << rule << "\n";
  return out.str();
}

}  // namespace cudakit::memory
