// AllocatorConfig::parse: CUDAKIT_ALLOC_CONF strings ("key:value,key:[B:d,...]"). The parsed
// config is written back too, as snapshots do (their "allocator_settings"), and the same text is
// read as set_allocator_settings reads it, over the defaults.
#include "cudakit/memory/allocator_config.hpp"
#include "read_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return cudakit::fuzz::read_input(data, size, [](std::string_view text) {
    (void)cudakit::memory::AllocatorConfig::parse(text).to_string();
  }) | cudakit::fuzz::read_input(data, size, [](std::string_view text) {
    (void)cudakit::memory::AllocatorConfig::parse_runtime(text, {}).to_string();
  });
}
