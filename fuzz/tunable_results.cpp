// parse_results_file: TunableOp results files (Validator lines, then OpName,ParamsSignature,
// Solution,Time). Every result it accepts must be written back and read again unchanged.
#include <cstdlib>

#include "cudakit/tunable/results_file.hpp"
#include "read_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return cudakit::fuzz::read_input(data, size, [](std::string_view text) {
    const cudakit::tunable::ResultsFileContents contents = cudakit::tunable::parse_results_file(text);
    const cudakit::tunable::ResultsFileContents again =
        cudakit::tunable::parse_results_file(cudakit::tunable::format_results_file(contents.validators, contents.results));
    if (again.results.size() != contents.results.size() || !again.problems.empty()) std::abort();
    for (std::size_t i = 0; i < again.results.size(); ++i) {
      if (!(again.results[i].key == contents.results[i].key) ||
          !(again.results[i].solution == contents.results[i].solution)) {
        std::abort();
      }
    }
  });
}
