// Child process of the IpcMemoryGpu tests: argv = <socket fd> <expected byte> <byte to write>.
// Receives a handle over the socket, opens it, checks that every byte holds the expected
// value, fills the block with the other, synchronizes and answers 'k' (or 'f' and a message on
// stderr). Then waits for one command byte: 'c' closes the memory, answers 'k' and exits 0.
// The parent may kill it instead, while it holds the memory open.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <vector>

#include <cuda_runtime_api.h>

#include "cudakit/memory/ipc/ipc_memory.hpp"
#include "cudakit/memory/ipc/ipc_socket.hpp"

namespace {
void answer(int socket, char c) {
  if (::write(socket, &c, 1) != 1) std::exit(5);
}
}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) return 2;
  const int socket = std::atoi(argv[1]);
  const auto expected = static_cast<unsigned char>(std::atoi(argv[2]));
  const int fill = std::atoi(argv[3]);
  try {
    cudakit::memory::IpcMemory memory = cudakit::memory::IpcMemory::open(cudakit::memory::receive_ipc_handle(socket));
    std::vector<unsigned char> host(memory.size());
    if (cudaMemcpy(host.data(), memory.ptr(), host.size(), cudaMemcpyDeviceToHost) != cudaSuccess) {
      std::fprintf(stderr, "ipc memory child: reading the block failed\n");
      answer(socket, 'f');
      return 3;
    }
    for (std::size_t i = 0; i < host.size(); ++i) {
      if (host[i] != expected) {
        std::fprintf(stderr, "ipc memory child: byte %zu holds %d, expected %d\n", i, host[i], expected);
        answer(socket, 'f');
        return 3;
      }
    }
    if (cudaMemset(memory.ptr(), fill, memory.size()) != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess) {
      std::fprintf(stderr, "ipc memory child: writing the block failed\n");
      answer(socket, 'f');
      return 3;
    }
    answer(socket, 'k');
    char command = 0;
    if (::read(socket, &command, 1) != 1 || command != 'c') return 4;
    memory.close();
    answer(socket, 'k');
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ipc memory child: %s\n", e.what());
    answer(socket, 'f');
    return 2;
  }
}
