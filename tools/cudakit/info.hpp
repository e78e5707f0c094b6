#pragma once
#include <ostream>
namespace cudakit::cli {
// The report `cudakit info` prints; `cudakit demo` prints it first.
void print_info(std::ostream& out);
}  // namespace cudakit::cli
