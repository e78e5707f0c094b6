// parse_untuned_file: the OpName,ParamsSignature lines record_untuned writes. Every key it
// accepts must be written back and read again unchanged.
#include <cstdlib>

#include "cudakit/tunable/results_file.hpp"
#include "read_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return cudakit::fuzz::read_input(data, size, [](std::string_view text) {
    const cudakit::tunable::UntunedFileContents contents = cudakit::tunable::parse_untuned_file(text);
    for (const cudakit::tunable::GemmKey& key : contents.keys) {
      if (!(cudakit::tunable::GemmKey::parse(key.op_name(), key.signature()) == key)) std::abort();
    }
  });
}
