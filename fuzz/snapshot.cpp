// snapshot_from_json: a snapshot file as snapshot_to_json / dump_snapshot write it.
#include <string>

#include "cudakit/memory/snapshot.hpp"
#include "read_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return cudakit::fuzz::read_input(data, size, [](std::string_view json) {
    (void)cudakit::memory::snapshot_from_json(std::string(json));
  });
}
