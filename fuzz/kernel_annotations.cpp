// kernel_annotations_from_json: an annotations file as save_kernel_annotations writes it and
// `cudakit trace merge` reads it ({"node id": [{"key": value, ...}, ...], ...}).
#include "cudakit/graphs/kernel_annotations.hpp"
#include "read_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return cudakit::fuzz::read_input(data, size, [](std::string_view json) {
    (void)cudakit::graphs::kernel_annotations_from_json(json);
  });
}
