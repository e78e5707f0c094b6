// parse_safetensors_header: the first bytes of a safetensors checkpoint (length, JSON header).
// The input's size stands for the file's, so the data-section checks run as well. A refusal's
// text must be valid UTF-8 whatever bytes the header holds, or Python could not show it (See
// Note [Quoting file bytes]): one that is not aborts.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "cudakit/core/error.hpp"
#include "cudakit/gds/safetensors.hpp"
#include "gds/detail/utf8.hpp"
#include "read_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return cudakit::fuzz::read_input(data, size, [](std::string_view bytes) {
    try {
      (void)cudakit::gds::parse_safetensors_header(bytes, bytes.size());
    } catch (const cudakit::InvalidArgumentError& error) {
      if (cudakit::gds::detail::first_invalid_utf8(error.what()) != std::string_view::npos) {
        std::fprintf(stderr, "fuzz: the refusal is not valid UTF-8: %s\n", error.what());
        std::abort();
      }
      throw;
    }
  });
}
