// parse_snapshot_trace: a PyTorch memory snapshot as `cudakit alloc-replay SNAPSHOT` reads it (the
// pickle of torch.cuda.memory._dump_snapshot, or JSON), then its trace replayed under the four
// what-if allocators within a small device, as the command does.
#include <string>

#include "cudakit/memory/snapshot_trace.hpp"
#include "cudakit/memory/what_if_replay.hpp"
#include "read_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return cudakit::fuzz::read_input(data, size, [](std::string_view bytes) {
    const cudakit::memory::SnapshotTrace s = cudakit::memory::parse_snapshot_trace(bytes, "fuzz");
    cudakit::memory::WhatIfOptions options;
    options.device_memory = std::size_t{1} << 30;
    options.capacity = std::size_t{256} << 20;
    for (const auto& device : s.devices) (void)cudakit::memory::replay_what_if(device, options);
  });
}
