#include "memory/ipc/detail/fd_passing.hpp"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/error.hpp"

namespace cudakit::memory::detail {
using cudakit::detail::concat;

namespace {

constexpr std::uint32_t kMessageMagic = 0x444B4643;  // "CFKD" little-endian: cudakit fds
constexpr std::size_t kHeaderBytes = 12;
constexpr std::size_t kBatch = 250;  // under SCM_MAX_FD (253)

void check_stream_socket(int socket, const char* api) {
  int type = 0;
  socklen_t type_len = sizeof type;
  sockaddr_storage address{};
  socklen_t address_len = sizeof address;
  if (::getsockopt(socket, SOL_SOCKET, SO_TYPE, &type, &type_len) != 0 ||
      ::getsockname(socket, reinterpret_cast<sockaddr*>(&address), &address_len) != 0) {
    throw InvalidArgumentError(api, concat("descriptor ", socket, " is not a socket: ", std::strerror(errno)));
  }
  if (address.ss_family != AF_UNIX || type != SOCK_STREAM) {
    throw InvalidArgumentError(api, concat("descriptor ", socket, " is a socket of family ", address.ss_family,
                                           " and type ", type, "; file descriptors travel only over a "
                                           "Unix-domain stream socket (AF_UNIX, SOCK_STREAM)"));
  }
}

void put_u32(unsigned char* out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<unsigned char>(v >> (8 * i));
}
std::uint32_t get_u32(const unsigned char* in) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= std::uint32_t{in[i]} << (8 * i);
  return v;
}

// One sendmsg() of `data` with `fds`, then the rest of `data` without them.
void send_with(int socket, const unsigned char* data, std::size_t size, std::span<const int> fds, const char* api) {
  std::vector<char> control(CMSG_SPACE(sizeof(int) * std::max<std::size_t>(fds.size(), 1)));
  while (size > 0) {
    iovec iov{const_cast<unsigned char*>(data), size};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    if (!fds.empty()) {
      msg.msg_control = control.data();
      msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
      cmsghdr* c = CMSG_FIRSTHDR(&msg);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
      std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
    }
    const ssize_t n = ::sendmsg(socket, &msg, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw StateError(api, concat("sending over socket ", socket, " failed: ", std::strerror(errno)));
    }
    fds = {};  // sent with the first bytes
    data += n;
    size -= static_cast<std::size_t>(n);
  }
}

// Reads exactly `size` bytes; descriptors that come with them are appended to `fds` (at most
// `max_fds` per read).
void receive_exactly(int socket, unsigned char* data, std::size_t size, std::size_t max_fds,
                     std::vector<FileDescriptor>& fds, const char* api) {
  std::vector<char> control(CMSG_SPACE(sizeof(int) * std::max<std::size_t>(max_fds, 1)));
  while (size > 0) {
    iovec iov{data, size};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    if (max_fds > 0) {
      msg.msg_control = control.data();
      msg.msg_controllen = control.size();
    }
    const ssize_t n = ::recvmsg(socket, &msg, MSG_CMSG_CLOEXEC);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw StateError(api, concat("receiving from socket ", socket, " failed: ", std::strerror(errno)));
    }
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
      const std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (std::size_t i = 0; i < count; ++i) {
        int fd = -1;
        std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
        fds.emplace_back(fd);
      }
    }
    if (msg.msg_flags & MSG_CTRUNC) {
      throw InvalidArgumentError(api, "a message carried more file descriptors than it announced");
    }
    if (n == 0) throw StateError(api, concat("the peer closed socket ", socket, " in the middle of a message"));
    data += n;
    size -= static_cast<std::size_t>(n);
  }
}

}  // namespace

void send_fd_message(int socket, std::string_view bytes, std::span<const int> fds, const char* api) {
  check_stream_socket(socket, api);
  if (bytes.size() > kMaxMessageBytes || fds.size() > kMaxMessageFds) {
    throw InvalidArgumentError(api, concat("a message of ", bytes.size(), " bytes and ", fds.size(),
                                           " descriptors exceeds the limits (", kMaxMessageBytes, " bytes, ",
                                           kMaxMessageFds, " descriptors)"));
  }
  std::vector<unsigned char> first(kHeaderBytes + bytes.size());
  put_u32(first.data(), kMessageMagic);
  put_u32(first.data() + 4, static_cast<std::uint32_t>(bytes.size()));
  put_u32(first.data() + 8, static_cast<std::uint32_t>(fds.size()));
  std::memcpy(first.data() + kHeaderBytes, bytes.data(), bytes.size());
  const std::size_t batch = std::min(fds.size(), kBatch);
  send_with(socket, first.data(), first.size(), fds.first(batch), api);
  for (std::size_t done = batch; done < fds.size(); done += kBatch) {
    const unsigned char marker = 0;
    send_with(socket, &marker, 1, fds.subspan(done, std::min(kBatch, fds.size() - done)), api);
  }
}

FdMessage receive_fd_message(int socket, const char* api) {
  check_stream_socket(socket, api);
  FdMessage out;
  unsigned char header[kHeaderBytes];
  receive_exactly(socket, header, kHeaderBytes, kBatch, out.fds, api);
  if (get_u32(header) != kMessageMagic) {
    throw InvalidArgumentError(api, "the socket did not carry a cudakit descriptor message (wrong magic)");
  }
  const std::uint32_t length = get_u32(header + 4);
  const std::uint32_t count = get_u32(header + 8);
  if (length > kMaxMessageBytes || count > kMaxMessageFds) {
    throw InvalidArgumentError(api, concat("a message announcing ", length, " bytes and ", count,
                                           " descriptors exceeds the limits"));
  }
  out.bytes.resize(length);
  std::vector<FileDescriptor> none;
  receive_exactly(socket, reinterpret_cast<unsigned char*>(out.bytes.data()), length, 0, none, api);
  while (out.fds.size() < count) {
    unsigned char marker = 0;
    const std::size_t before = out.fds.size();
    receive_exactly(socket, &marker, 1, kBatch, out.fds, api);
    if (out.fds.size() == before) {
      throw InvalidArgumentError(api, concat("a message announced ", count, " descriptors and carried ", before));
    }
  }
  if (out.fds.size() != count) {
    throw InvalidArgumentError(api, concat("a message announced ", count, " descriptors and carried ", out.fds.size()));
  }
  return out;
}

pid_t socket_peer_pid(int socket) noexcept {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(socket, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return 0;
  return cred.pid;
}

}  // namespace cudakit::memory::detail
