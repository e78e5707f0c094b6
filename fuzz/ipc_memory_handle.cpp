// IpcMemoryHandle::from_bytes: a handle's bytes as another process sent them (a socket message,
// a file, hex on a command line). What parses is written back and must read the same.
#include <cstdlib>

#include "cudakit/memory/ipc/ipc_memory_handle.hpp"
#include "read_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return cudakit::fuzz::read_input(data, size, [](std::string_view bytes) {
    const auto handle = cudakit::memory::IpcMemoryHandle::from_bytes(bytes);
    if (handle.to_bytes() != bytes) std::abort();  // the form is canonical: one value, one spelling
  });
}
