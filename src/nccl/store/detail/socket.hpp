#pragma once
// Small POSIX socket helpers the TCP store's server and client share.

#include <chrono>
#include <string>
#include <string_view>

namespace cudakit::nccl::detail {

// Writes all of `bytes` (MSG_NOSIGNAL: a closed peer is an error, not a SIGPIPE). False when
// the connection fails.
bool send_all(int socket, std::string_view bytes) noexcept;
// The text of errno, for messages.
std::string errno_text(int error);
// Milliseconds from now until `deadline`, at least 0, at most INT_MAX (for poll()).
int poll_timeout_ms(std::chrono::steady_clock::time_point deadline) noexcept;
// Closes `socket` when it is open and sets it to -1.
void close_socket(int& socket) noexcept;

}  // namespace cudakit::nccl::detail
