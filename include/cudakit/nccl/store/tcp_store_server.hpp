#pragma once
// @brief TcpStoreServer: the TCP store's server, a thread serving set/get/add/check/wait over one
// poll() loop. Rank 0 usually hosts it (See make_store in rendezvous.hpp).

#include <cstdint>
#include <memory>
#include <string>

namespace cudakit::nccl {

class TcpStoreServer {
 public:
  // Listens on `host`:`port` (port 0: an ephemeral port, see port()); "0.0.0.0" for every
  // interface. @throws NcclError when the address cannot be bound, naming it.
  explicit TcpStoreServer(const std::string& host = "0.0.0.0", int port = 0);
  // Stops the thread and closes every connection; clients then see their store as gone.
  ~TcpStoreServer();
  TcpStoreServer(const TcpStoreServer&) = delete;
  TcpStoreServer& operator=(const TcpStoreServer&) = delete;

  [[nodiscard]] int port() const noexcept;
  // How many keys are stored (for tests and diagnostics).
  [[nodiscard]] std::size_t key_count() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace cudakit::nccl
