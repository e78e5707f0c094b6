#pragma once
// GCC 12 has no <format>: messages are built by streaming their parts.

#include <sstream>
#include <string>

namespace cudakit::detail {

template <class... Parts>
std::string concat(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return std::move(out).str();
}

}  // namespace cudakit::detail
