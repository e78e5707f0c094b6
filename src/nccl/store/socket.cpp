#include "nccl/store/detail/socket.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>

namespace cudakit::nccl::detail {

bool send_all(int socket, std::string_view bytes) noexcept {
  while (!bytes.empty()) {
    const ssize_t n = ::send(socket, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

std::string errno_text(int error) { return std::string(std::strerror(error)); }

int poll_timeout_ms(std::chrono::steady_clock::time_point deadline) noexcept {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  if (left.count() <= 0) return 0;
  return left.count() > INT_MAX ? INT_MAX : static_cast<int>(left.count());
}

void close_socket(int& socket) noexcept {
  if (socket >= 0) ::close(socket);
  socket = -1;
}

}  // namespace cudakit::nccl::detail
