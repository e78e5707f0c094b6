#pragma once
// @brief TcpStoreServer: the TCP store's server, a thread serving set/get/add/check/wait over one
// poll() loop. Rank 0 usually hosts it (See make_store in rendezvous.hpp).

#include <cstdint>
#include <memory>
#include <string>

namespace cudakit::nccl {

// The server of TcpStore: holds the keys in memory for as long as it lives, on a thread of its
// own. Thread-safe.
class TcpStoreServer {
 public:
  // Listens on `host`:`port` (port 0: an ephemeral port, see port()); "0.0.0.0" for every
  // interface.
  // @param host the IPv4 address to listen on ("0.0.0.0": every interface)
  // @param port the port to listen on, 0..65535 (0: one the system picks)
  // @throws NcclError when the address cannot be bound, naming it.
  // @throws InvalidArgumentError for a host that is no IPv4 address or a port outside 0..65535.
  explicit TcpStoreServer(const std::string& host = "0.0.0.0", int port = 0);
  // Stops the thread and closes every connection; clients then see their store as gone.
  ~TcpStoreServer();
  // Not copyable: the server owns its socket and thread.
  TcpStoreServer(const TcpStoreServer&) = delete;
  // Not assignable: the server owns its socket and thread.
  TcpStoreServer& operator=(const TcpStoreServer&) = delete;

  // @return the port the server listens on (the one the system picked when constructed with 0).
  [[nodiscard]] int port() const noexcept;
  // How many keys are stored (for tests and diagnostics).
  // @return the number of keys set so far.
  [[nodiscard]] std::size_t key_count() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace cudakit::nccl
