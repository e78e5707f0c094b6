// Child process of EventGpu.IpcEventIsSharedWithAnotherProcess. Exit codes: 0 the event was
// pending when opened and complete after synchronize; 2 bad arguments or open failed; 3 it was
// already complete when opened; 4 still pending after synchronize.
#include <cstdio>
#include <exception>

#include "cudakit/core/event.hpp"

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  try {
    cudakit::Event event = cudakit::Event::from_ipc_handle(cudakit::IpcEventHandle::from_hex(argv[1]));
    const bool pending_at_open = !event.query();
    event.synchronize();
    if (!event.query()) return 4;
    return pending_at_open ? 0 : 3;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ipc child: %s\n", e.what());
    return 2;
  }
}
