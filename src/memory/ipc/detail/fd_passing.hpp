#pragma once
// Bytes with file descriptors attached, over a connected Unix-domain stream socket (SCM_RIGHTS):
// how an IPC memory handle reaches another process with the descriptors of its chunks (See
// Note [Descriptor messages]).

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cudakit/memory/file_descriptor.hpp"

namespace cudakit::memory::detail {

// Note [Descriptor messages]
// A stream socket keeps no message boundaries, but the kernel delivers descriptors with the
// bytes they were sent with, and one sendmsg() carries at most 253 of them (SCM_MAX_FD). A
// message is therefore a 12-byte header (magic, payload length, descriptor count) and the
// payload, sent with the first batch of descriptors, then one byte per further batch. The
// receiver reads the header alone first with room for a batch of descriptors, so that they are
// not dropped; then exactly the payload; then each batch byte with its descriptors.
// Descriptors arrive close-on-exec. Limits: 16 MiB of payload and 65536 descriptors.
inline constexpr std::size_t kMaxMessageBytes = std::size_t{16} << 20;
inline constexpr std::size_t kMaxMessageFds = 65536;

struct FdMessage {
  std::string bytes;
  std::vector<FileDescriptor> fds;
};

// Sends one message. `api` names the caller in errors.
// @throws InvalidArgumentError when `socket` is no Unix-domain stream socket or a limit is
// passed; StateError when sending fails (the peer closed it).
void send_fd_message(int socket, std::string_view bytes, std::span<const int> fds, const char* api);
// Receives one message (blocking). @throws InvalidArgumentError as send, or for a malformed
// message; StateError when the peer closed the socket or receiving fails.
FdMessage receive_fd_message(int socket, const char* api);
// The pid of the process at the other end (SO_PEERCRED: the process that connected, or that
// made the pair for socketpair()); 0 when unknown.
pid_t socket_peer_pid(int socket) noexcept;

}  // namespace cudakit::memory::detail
