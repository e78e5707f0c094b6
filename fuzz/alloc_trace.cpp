// parse_alloc_trace: the CSV text of a recorded allocation trace (`op,id,size,stream` lines).
#include <string>

#include "cudakit/memory/alloc_trace.hpp"
#include "read_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return cudakit::fuzz::read_input(data, size, [](std::string_view text) {
    (void)cudakit::memory::parse_alloc_trace(std::string(text), "trace");
  });
}
