#include "cudakit/gds/io_report.hpp"

#include <iomanip>
#include <sstream>

namespace cudakit::gds {

const char* to_string(IoPath path) noexcept {
  switch (path) {
    case IoPath::cufile_direct: return "cufile_direct";
    case IoPath::cufile_compat: return "cufile_compat";
    case IoPath::cudakit_odirect: return "cudakit_odirect";
    case IoPath::buffered: return "buffered";
    case IoPath::mapped: return "mapped";
  }
  return "unknown";
}

std::string IoReport::to_string() const {
  std::ostringstream out;
  out << (direction == IoDirection::load ? "load " : "save ") << bytes << " bytes via "
      << gds::to_string(path) << " in " << std::setprecision(3) << seconds << " s ("
      << gigabytes_per_second() << " GB/s)";
  if (io_threads > 0) out << ", " << io_threads << " threads of " << chunk_bytes << "-byte chunks";
  out << ", " << direct_bytes << " direct + " << buffered_bytes << " buffered bytes";
  if (requests != 1) out << ", " << requests << " requests";
  if (!note.empty()) out << " (" << note << ")";
  return out.str();
}

void IoStatistics::add(const IoReport& report) noexcept {
  PerPath& row = by_path[static_cast<int>(report.path)];
  ++row.calls;
  row.bytes += report.bytes;
  row.seconds += report.seconds;
  (report.direction == IoDirection::load ? loads : saves) += 1;
}

}  // namespace cudakit::gds
