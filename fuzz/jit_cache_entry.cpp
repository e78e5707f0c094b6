// decode_cache_entry: a jiterator disk-cache entry as found in the cache folder (any bytes: a
// damaged, truncated or foreign file). What decodes is encoded back and must be the same bytes.
#include <cstdlib>

#include "cudakit/jiterator/detail/cache_entry.hpp"
#include "read_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return cudakit::fuzz::read_input(data, size, [](std::string_view bytes) {
    std::string why;
    const auto entry = cudakit::jiterator::detail::decode_cache_entry(bytes, &why);
    if (!entry) {
      if (why.empty()) std::abort();  // a refusal always says why
      return;
    }
    if (cudakit::jiterator::detail::encode_cache_entry(entry->key, entry->cubin) != bytes) std::abort();
  });
}
