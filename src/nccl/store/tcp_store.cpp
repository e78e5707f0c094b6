#include "cudakit/nccl/store/tcp_store.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <thread>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/nccl/nccl_error.hpp"
#include "nccl/store/detail/socket.hpp"

namespace cudakit::nccl {

using cudakit::detail::concat;
using detail::StoreMessage;
using detail::StoreMessageType;

namespace {

// Connects to one address by `deadline`; -1 (and `error`) when it fails.
int connect_once(const addrinfo& info, std::chrono::steady_clock::time_point deadline, int& error) {
  const int socket = ::socket(info.ai_family, info.ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, info.ai_protocol);
  if (socket < 0) {
    error = errno;
    return -1;
  }
  int result = ::connect(socket, info.ai_addr, info.ai_addrlen);
  if (result != 0 && errno == EINPROGRESS) {
    pollfd fd{socket, POLLOUT, 0};
    if (::poll(&fd, 1, detail::poll_timeout_ms(deadline)) == 1) {
      socklen_t length = sizeof error;
      ::getsockopt(socket, SOL_SOCKET, SO_ERROR, &error, &length);
      result = error == 0 ? 0 : -1;
    } else {
      error = ETIMEDOUT;
    }
  } else if (result != 0) {
    error = errno;
  }
  if (result != 0) {
    ::close(socket);
    return -1;
  }
  const int one = 1;
  ::setsockopt(socket, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return socket;
}

}  // namespace

TcpStore::TcpStore(std::string host, int port, int rank, std::chrono::milliseconds timeout,
                   std::shared_ptr<TcpStoreServer> server)
    : Store(rank, timeout), host_(std::move(host)), port_(port), server_(std::move(server)) {
  if (port <= 0 || port > 65535)
    throw InvalidArgumentError("TcpStore", concat("port ", port, " of ", host_, " is outside 1..65535"));
  connect_by(Clock::now() + timeout, "connect");
}

TcpStore::~TcpStore() { disconnect(); }

std::string TcpStore::address() const { return concat("tcp://", host_, ":", port_); }

void TcpStore::disconnect() noexcept {
  detail::close_socket(socket_);
  pending_.clear();
}

void TcpStore::connect_by(Clock::time_point deadline, const std::string& what) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  int error = 0;
  std::string last;
  // Retried with a growing pause: the server may come up after its clients (a join), or
  // restart.
  auto pause = std::chrono::milliseconds(5);
  while (true) {
    addrinfo* found = nullptr;
    const int resolved = ::getaddrinfo(host_.c_str(), std::to_string(port_).c_str(), &hints, &found);
    if (resolved == 0) {
      for (addrinfo* a = found; a != nullptr && socket_ < 0; a = a->ai_next) socket_ = connect_once(*a, deadline, error);
      ::freeaddrinfo(found);
      if (socket_ >= 0) {
        // Blocking from here on: every read waits in poll() with its deadline first.
        const int flags = ::fcntl(socket_, F_GETFL);
        ::fcntl(socket_, F_SETFL, flags & ~O_NONBLOCK);
        return;
      }
      last = detail::errno_text(error);
    } else {
      last = concat("cannot resolve '", host_, "': ", ::gai_strerror(resolved));
    }
    if (Clock::now() + pause >= deadline) break;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(200));
  }
  throw NcclError(0, "TcpStore", rank(), concat("store ", what),
                  concat("cannot reach the store at ", address(), " (", last, ")"));
}

StoreMessage TcpStore::round_trip(const StoreMessage& request, Clock::time_point deadline,
                                  const std::string& what, bool retry) {
  const std::string frame = detail::encode_store_message(request);
  std::lock_guard lock(mutex_);
  for (int attempt = 0;; ++attempt) {
    const bool may_retry = retry && attempt == 0;
    if (socket_ < 0) connect_by(deadline, what);
    if (!detail::send_all(socket_, frame)) {
      disconnect();
      if (may_retry) continue;
      throw NcclError(0, "TcpStore", rank(), concat("store ", what),
                      concat("the connection to ", address(), " broke while sending"));
    }
    while (true) {
      if (auto decoded = detail::decode_store_message(pending_)) {
        pending_.erase(0, decoded->consumed);
        if (decoded->message.type == StoreMessageType::error) {
          const std::string text = decoded->message.fields.empty() ? "" : decoded->message.fields[0];
          throw NcclError(0, "TcpStore", rank(), concat("store ", what),
                          concat("the store at ", address(), " answered: ", text));
        }
        return std::move(decoded->message);
      }
      pollfd fd{socket_, POLLIN, 0};
      const int ready = ::poll(&fd, 1, detail::poll_timeout_ms(deadline));
      if (ready == 0) {
        // The reply may still come: the connection is dropped so that it cannot be taken for
        // the reply to the next request.
        disconnect();
        throw NcclError(0, "TcpStore", rank(), concat("store ", what),
                        concat("no answer from the store at ", address(), " in time"));
      }
      char buffer[65536];
      const ssize_t n = ready < 0 ? -1 : ::recv(socket_, buffer, sizeof buffer, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        disconnect();
        break;
      }
      pending_.append(buffer, static_cast<std::size_t>(n));
    }
    if (!may_retry)
      throw NcclError(0, "TcpStore", rank(), concat("store ", what),
                      concat("the store at ", address(), " closed the connection (stopped or restarted)"));
  }
}

void TcpStore::set(const std::string& key, const std::string& value) {
  round_trip({StoreMessageType::set, {key, value}}, Clock::now() + timeout(), concat("set '", key, "'"), true);
}

std::string TcpStore::get(const std::string& key) {
  const std::string keys[] = {key};
  wait(keys, timeout());
  StoreMessage reply =
      round_trip({StoreMessageType::get, {key}}, Clock::now() + timeout(), concat("get '", key, "'"), true);
  return reply.fields.empty() ? std::string() : std::move(reply.fields[0]);
}

std::int64_t TcpStore::add(const std::string& key, std::int64_t delta) {
  // Not retried over a new connection: the first request may have been applied.
  const StoreMessage reply = round_trip({StoreMessageType::add, {key, std::to_string(delta)}},
                                        Clock::now() + timeout(), concat("add '", key, "'"), false);
  return detail::parse_store_number(reply.fields.empty() ? "" : reply.fields[0], "the store's sum");
}

bool TcpStore::check(std::span<const std::string> keys) {
  StoreMessage request{StoreMessageType::check, {keys.begin(), keys.end()}};
  const StoreMessage reply = round_trip(request, Clock::now() + timeout(), "check", true);
  return !reply.fields.empty() && reply.fields[0] == "1";
}

void TcpStore::wait(std::span<const std::string> keys, std::chrono::milliseconds timeout) {
  StoreMessage request{StoreMessageType::wait, {std::to_string(timeout.count())}};
  request.fields.insert(request.fields.end(), keys.begin(), keys.end());
  std::string names;
  for (const std::string& k : keys) names += concat(names.empty() ? "'" : ", '", k, "'");
  const std::string what = concat("wait for ", names, " (", timeout.count(), " ms)");
  // The server answers at its deadline; ours is a little later, so that its answer is read.
  round_trip(request, Clock::now() + timeout + std::chrono::milliseconds(500), what, true);
}

}  // namespace cudakit::nccl
