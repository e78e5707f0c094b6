#include "cudakit/nccl/store/tcp_store_server.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/nccl/nccl_error.hpp"
#include "cudakit/core/log.hpp"
#include "cudakit/nccl/store/detail/store_message.hpp"
#include "nccl/store/detail/socket.hpp"

namespace cudakit::nccl {

using cudakit::detail::concat;
using detail::StoreMessage;
using detail::StoreMessageType;

namespace {

struct Client {
  int socket = -1;
  std::string input;
};

// A wait request the keys of which are not all there yet.
struct Waiter {
  int socket;
  std::vector<std::string> keys;
  std::chrono::steady_clock::time_point deadline;
};

}  // namespace

struct TcpStoreServer::State {
  int listener = -1;
  int port = 0;
  int wake[2] = {-1, -1};  // written to by the destructor, to end poll()
  mutable std::mutex mutex;  // guards data (read by key_count)
  std::map<std::string, std::string> data;
  std::vector<Client> clients;
  std::vector<Waiter> waiters;
  std::thread thread;

  bool has_all(const std::vector<std::string>& keys) const {
    for (const std::string& k : keys)
      if (!data.contains(k)) return false;
    return true;
  }

  static StoreMessage reply(StoreMessageType type, std::string field) {
    return StoreMessage{type, {std::move(field)}};
  }

  // The reply to one request; nullopt for a wait that must wait.
  std::optional<StoreMessage> handle(int socket, const StoreMessage& request) {
    const auto& f = request.fields;
    auto refuse = [&](std::string_view why) {
      return reply(StoreMessageType::error, concat(to_string(request.type), ": ", why));
    };
    std::lock_guard lock(mutex);
    switch (request.type) {
      case StoreMessageType::set:
        if (f.size() != 2) return refuse("expects a key and a value");
        data[f[0]] = f[1];
        return StoreMessage{StoreMessageType::ok, {}};
      case StoreMessageType::get: {
        if (f.size() != 1) return refuse("expects one key");
        const auto it = data.find(f[0]);
        if (it == data.end()) return refuse(concat("no key '", f[0], "'"));
        return reply(StoreMessageType::value, it->second);
      }
      case StoreMessageType::add: {
        if (f.size() != 2) return refuse("expects a key and a delta");
        std::int64_t delta = 0, current = 0;
        try {
          delta = detail::parse_store_number(f[1], "the delta");
          const auto it = data.find(f[0]);
          if (it != data.end()) current = detail::parse_store_number(it->second, "the stored value");
        } catch (const Error& e) {
          return refuse(e.what());
        }
        const std::string next = std::to_string(current + delta);
        data[f[0]] = next;
        return reply(StoreMessageType::number, next);
      }
      case StoreMessageType::check:
        return reply(StoreMessageType::boolean, has_all(f) ? "1" : "0");
      case StoreMessageType::wait: {
        if (f.empty()) return refuse("expects a timeout");
        std::int64_t timeout_ms = 0;
        try {
          timeout_ms = detail::parse_store_number(f[0], "the timeout");
        } catch (const Error& e) {
          return refuse(e.what());
        }
        std::vector<std::string> keys(f.begin() + 1, f.end());
        if (has_all(keys)) return StoreMessage{StoreMessageType::ok, {}};
        waiters.push_back({socket, std::move(keys),
                           std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms)});
        return std::nullopt;
      }
      case StoreMessageType::ping:
        return StoreMessage{StoreMessageType::ok, {}};
      default:
        return refuse("is a reply, not a request");
    }
  }

  void answer(int socket, const StoreMessage& message) {
    (void)detail::send_all(socket, detail::encode_store_message(message));
  }

  // Answers the waits whose keys are now all there, and those past their deadline (with an
  // error: the client gives up by then as well).
  void serve_waiters() {
    const auto now = std::chrono::steady_clock::now();
    std::vector<std::pair<int, StoreMessage>> ready;
    {
      std::lock_guard lock(mutex);
      std::erase_if(waiters, [&](const Waiter& w) {
        if (has_all(w.keys)) ready.emplace_back(w.socket, StoreMessage{StoreMessageType::ok, {}});
        else if (now >= w.deadline) ready.emplace_back(w.socket, reply(StoreMessageType::error, "wait: timed out"));
        else return false;
        return true;
      });
    }
    for (const auto& [socket, message] : ready) answer(socket, message);
  }

  void drop(std::size_t index) {
    const int socket = clients[index].socket;
    std::erase_if(waiters, [&](const Waiter& w) { return w.socket == socket; });
    ::close(socket);
    clients.erase(clients.begin() + static_cast<std::ptrdiff_t>(index));
  }

  // Reads what `client` sent and answers every complete request; false when it must go
  // (closed, or a malformed frame: a peer that speaks another protocol is not waited for).
  bool serve(Client& client) {
    char buffer[65536];
    const ssize_t n = ::recv(client.socket, buffer, sizeof buffer, 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
    if (n <= 0) return false;
    client.input.append(buffer, static_cast<std::size_t>(n));
    try {
      while (auto decoded = detail::decode_store_message(client.input)) {
        client.input.erase(0, decoded->consumed);
        if (auto response = handle(client.socket, decoded->message)) answer(client.socket, *response);
      }
    } catch (const Error& e) {
      answer(client.socket, reply(StoreMessageType::error, e.what()));
      CUDAKIT_LOG(warning, "TcpStoreServer: dropping a client: ", e.what());
      return false;
    }
    return true;
  }

  void run() {
    std::vector<pollfd> fds;
    while (true) {
      fds.clear();
      fds.push_back({wake[0], POLLIN, 0});
      fds.push_back({listener, POLLIN, 0});
      for (const Client& c : clients) fds.push_back({c.socket, POLLIN, 0});
      int timeout = -1;
      {
        std::lock_guard lock(mutex);
        if (!waiters.empty()) timeout = 50;  // to expire waits past their deadline
      }
      if (::poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR) return;
      if (fds[0].revents != 0) return;
      if (fds[1].revents & POLLIN) {
        const int socket = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
        if (socket >= 0) {
          const int one = 1;
          ::setsockopt(socket, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
          clients.push_back({socket, {}});
        }
      }
      // Clients polled this round are fds[2 ..]; new ones (appended above) wait for the next.
      for (std::size_t i = fds.size() - 2; i-- > 0;) {
        if (fds[i + 2].revents == 0) continue;
        if (!serve(clients[i])) drop(i);
      }
      serve_waiters();
    }
  }
};

TcpStoreServer::TcpStoreServer(const std::string& host, int port) : state_(std::make_unique<State>()) {
  const std::string address = concat(host, ":", port);
  auto fail = [&](const char* step, int error) {
    detail::close_socket(state_->listener);
    throw NcclError(0, "TcpStoreServer", -1, "store",
                    concat("cannot ", step, " tcp://", address, ": ", detail::errno_text(error)));
  };
  if (port < 0 || port > 65535)
    throw InvalidArgumentError("TcpStoreServer", concat("port ", port, " is outside 0..65535"));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  if (::inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1)
    throw InvalidArgumentError("TcpStoreServer", concat("'", host, "' is not an IPv4 address to listen on"));
  state_->listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (state_->listener < 0) fail("open a socket for", errno);
  // A restarted store binds the port its clients know, though the old one's connections linger.
  const int one = 1;
  ::setsockopt(state_->listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(state_->listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) fail("bind", errno);
  if (::listen(state_->listener, 1024) != 0) fail("listen on", errno);
  socklen_t length = sizeof addr;
  ::getsockname(state_->listener, reinterpret_cast<sockaddr*>(&addr), &length);
  state_->port = ntohs(addr.sin_port);
  if (::pipe2(state_->wake, O_CLOEXEC) != 0) fail("make the wake-up pipe of", errno);
  state_->thread = std::thread([state = state_.get()] { state->run(); });
}

TcpStoreServer::~TcpStoreServer() {
  const char byte = 0;
  (void)!::write(state_->wake[1], &byte, 1);
  if (state_->thread.joinable()) state_->thread.join();
  for (Client& c : state_->clients) detail::close_socket(c.socket);
  detail::close_socket(state_->listener);
  detail::close_socket(state_->wake[0]);
  detail::close_socket(state_->wake[1]);
}

int TcpStoreServer::port() const noexcept { return state_->port; }

std::size_t TcpStoreServer::key_count() const {
  std::lock_guard lock(state_->mutex);
  return state_->data.size();
}

}  // namespace cudakit::nccl
