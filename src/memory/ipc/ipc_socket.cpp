#include "cudakit/memory/ipc/ipc_socket.hpp"

#include <unistd.h>

#include <vector>

#include "cudakit/memory/ipc/ipc_memory_export.hpp"
#include "memory/ipc/detail/fd_passing.hpp"
#include "memory/ipc/detail/ipc_ref_record.hpp"
#include "memory/ipc/detail/process_identity.hpp"

namespace cudakit::memory {

void send_ipc_handle(int socket, const IpcMemoryHandle& handle) {
  std::vector<int> fds;
  fds.reserve(handle.fds.size());
  for (const FileDescriptor& fd : handle.fds) fds.push_back(fd.get());
  detail::send_fd_message(socket, handle.to_bytes(), fds, "send_ipc_handle");
}

IpcMemoryHandle receive_ipc_handle(int socket) {
  detail::FdMessage message = detail::receive_fd_message(socket, "receive_ipc_handle");
  IpcMemoryHandle handle = IpcMemoryHandle::from_bytes(message.bytes);
  handle.fds = std::move(message.fds);
  if (handle.importer_pid == 0) {
    // Reserved for this process from now on: See Note [IPC ref-count records]. Best effort:
    // a record that is gone, or a handle from another machine, fails clearly at open.
    try {
      const detail::ProcessId self = detail::self_process();
      if (handle.boot_id == detail::boot_id() && handle.exporter_pid != self.pid) {
        detail::IpcRefRecord record = detail::IpcRefRecord::open(handle.ref_record, "receive_ipc_handle");
        if (record.claim(self)) handle.importer_pid = self.pid;
      }
    } catch (const std::exception&) {
    }
  }
  return handle;
}

void send_ipc_memory(int socket, void* ptr) {
  pid_t peer = detail::socket_peer_pid(socket);
  if (peer == ::getpid()) peer = 0;  // a socketpair() made here: the peer is unknown
  send_ipc_handle(socket, export_ipc_memory(ptr, peer));
}

}  // namespace cudakit::memory
