// maps_library: the text of /proc/<pid>/maps files of other processes (`cudakit top` reads them to
// tell processes that load libcudakit from the others). It must never throw.
#include "cudakit/core/telemetry.hpp"
#include "read_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return cudakit::fuzz::read_input(data, size, [](std::string_view text) {
    (void)cudakit::detail::maps_library(text, "libcudakit");
    (void)cudakit::detail::maps_library(text, "");
  });
}
