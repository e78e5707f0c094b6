// decode_store_message: the frames a TCP store's server reads from any client that connects, and
// a client reads from the server (See Note [Store messages]). Decodes frames until the input
// runs out; every decoded frame must encode back to the bytes it came from.
#include <cstdlib>

#include "cudakit/nccl/store/detail/store_message.hpp"
#include "read_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return cudakit::fuzz::read_input(data, size, [](std::string_view bytes) {
    while (auto decoded = cudakit::nccl::detail::decode_store_message(bytes)) {
      if (cudakit::nccl::detail::encode_store_message(decoded->message) != bytes.substr(0, decoded->consumed)) std::abort();
      bytes.remove_prefix(decoded->consumed);
    }
  });
}
