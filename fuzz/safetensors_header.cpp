// parse_safetensors_header: the first bytes of a safetensors checkpoint (length, JSON header).
// The input's size stands for the file's, so the data-section checks run as well.
#include <string>

#include "cudakit/gds/safetensors.hpp"
#include "read_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return cudakit::fuzz::read_input(data, size, [](std::string_view bytes) {
    (void)cudakit::gds::parse_safetensors_header(bytes, bytes.size());
  });
}
