#pragma once
// @brief TcpStore: a client of a TcpStoreServer (torch.distributed.TCPStore's role). Thread-safe:
// one request at a time goes over its connection.

#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include "cudakit/nccl/store/detail/store_message.hpp"
#include "cudakit/nccl/store/store.hpp"
#include "cudakit/nccl/store/tcp_store_server.hpp"

namespace cudakit::nccl {

// A Store on a TcpStoreServer, over one TCP connection. set, get, check and wait survive a
// restart of the server (each is retried once over a new connection); add is not retried, since
// the first request may have been applied, and fails instead.
class TcpStore final : public Store {
 public:
  // Connects to `host`:`port`, retrying until `timeout` (the server may start after its
  // clients). `server`, when given, is kept alive as long as this client (the rank that hosts
  // the store).
  // @param host the server's host name or IPv4 address
  // @param port the server's port, 1..65535
  // @param rank this process's rank, for messages
  // @param timeout how long to keep trying to connect, and the default timeout of get and wait
  // @param server the server this process hosts, if any (shared ownership)
  // @throws NcclError naming the address and `rank` when no connection is made in
  // time.
  // @throws InvalidArgumentError for a port outside 1..65535.
  TcpStore(std::string host, int port, int rank, std::chrono::milliseconds timeout,
           std::shared_ptr<TcpStoreServer> server = nullptr);
  // Closes the connection (and releases the hosted server, if this was its last owner).
  ~TcpStore() override;
  // Not copyable: the store owns its connection.
  TcpStore(const TcpStore&) = delete;
  // Not assignable: the store owns its connection.
  TcpStore& operator=(const TcpStore&) = delete;

  void set(const std::string& key, const std::string& value) override;
  [[nodiscard]] std::string get(const std::string& key) override;
  std::int64_t add(const std::string& key, std::int64_t delta) override;
  [[nodiscard]] bool check(std::span<const std::string> keys) override;
  void wait(std::span<const std::string> keys, std::chrono::milliseconds timeout) override;
  using Store::wait;
  [[nodiscard]] std::string address() const override;

 private:
  using Clock = std::chrono::steady_clock;
  // Sends `request` and reads the reply by `deadline`; reconnects once (a restarted server)
  // when `retry` allows it. @throws NcclError naming `what`.
  detail::StoreMessage round_trip(const detail::StoreMessage& request, Clock::time_point deadline,
                                  const std::string& what, bool retry);
  void connect_by(Clock::time_point deadline, const std::string& what);
  void disconnect() noexcept;

  std::string host_;
  int port_;
  std::mutex mutex_;  // one request at a time on the connection (the watchdog shares it)
  int socket_ = -1;
  std::string pending_;  // bytes read past the last reply
  std::shared_ptr<TcpStoreServer> server_;
};

}  // namespace cudakit::nccl
