// parse_safetensors_index: model.safetensors.index.json, the map of a sharded checkpoint. Its
// refusals must be valid UTF-8 too (See Note [Quoting file bytes]).
#include <cstdio>
#include <cstdlib>
#include <string>

#include "cudakit/core/error.hpp"
#include "cudakit/gds/safetensors_index.hpp"
#include "gds/detail/utf8.hpp"
#include "read_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return cudakit::fuzz::read_input(data, size, [](std::string_view bytes) {
    try {
      (void)cudakit::gds::parse_safetensors_index(bytes);
    } catch (const cudakit::InvalidArgumentError& error) {
      if (cudakit::gds::detail::first_invalid_utf8(error.what()) != std::string_view::npos) {
        std::fprintf(stderr, "fuzz: the refusal is not valid UTF-8: %s\n", error.what());
        std::abort();
      }
      throw;
    }
  });
}
