#pragma once
// @brief IPC memory handles over a Unix-domain stream socket (AF_UNIX, SOCK_STREAM: socketpair() or a
// connect()/accept() pair): the handle's bytes and, for the expandable kind, its chunks' file
// descriptors (SCM_RIGHTS), which no other channel carries. See memory/ipc/ipc_memory_export.hpp.

#include <sys/types.h>

#include "cudakit/memory/ipc/ipc_memory_handle.hpp"

namespace cudakit::memory {

// Sends `handle` (the descriptors are duplicated into the receiver; the handle keeps its own).
// Blocks until the socket has taken the message.
// @param socket a connected Unix-domain stream socket.
// @param handle the handle to send.
// @throws InvalidArgumentError when `socket` is no Unix-domain stream socket.
// @throws StateError when sending fails (the peer has closed the socket).
void send_ipc_handle(int socket, const IpcMemoryHandle& handle);

// Receives one handle (blocking) with its descriptors. An anonymous handle (exported naming no
// importer) is reserved for this process on arrival, so that the exporter releases the block
// should this process die before opening it.
// @param socket a connected Unix-domain stream socket.
// @return the handle, owning the descriptors received.
// @throws InvalidArgumentError when `socket` is no Unix-domain stream socket, or for a message
// that is not a handle (as IpcMemoryHandle::from_bytes).
// @throws StateError when the peer closed the socket.
[[nodiscard]] IpcMemoryHandle receive_ipc_handle(int socket);

// export_ipc_memory(ptr, peer) and send_ipc_handle(): shares the live allocation at `ptr` of
// cudakit's device allocator with the process at the other end of `socket`. The peer is the
// one SO_PEERCRED names (the process that connected or accepted); for a socketpair() this
// process made, that is this process, and the handle is exported anonymous, for the receiver
// to claim.
// @param socket a connected Unix-domain stream socket.
// @param ptr the start of a live allocation of cudakit's device allocator.
// @throws InvalidArgumentError as export_ipc_memory() and send_ipc_handle().
// @throws StateError as export_ipc_memory() and send_ipc_handle().
// @throws CudaError as export_ipc_memory().
void send_ipc_memory(int socket, void* ptr);

}  // namespace cudakit::memory
