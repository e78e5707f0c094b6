#include "memory/detail/format_bytes.hpp"

#include <iomanip>
#include <sstream>

namespace cudakit::memory::detail {

std::string format_bytes(std::size_t bytes) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(2);
  if (bytes >= (1ull << 30)) out << bytes / 1073741824.0 << " GiB";
  else if (bytes >= (1u << 20)) out << bytes / 1048576.0 << " MiB";
  else if (bytes >= 1024) out << bytes / 1024.0 << " KiB";
  else out << bytes << " B";
  return out.str();
}

}  // namespace cudakit::memory::detail
