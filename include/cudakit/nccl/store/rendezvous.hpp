#pragma once
// @brief Rendezvous: how the ranks of a multi-process communicator find each other — rank, world
// size and the store, from arguments or the usual variables (RANK, WORLD_SIZE, LOCAL_RANK,
// MASTER_ADDR, MASTER_PORT), as torchrun sets them.

#include <chrono>
#include <map>
#include <memory>
#include <string>

#include "cudakit/nccl/store/store.hpp"

namespace cudakit::nccl {

// Where this rank meets the others. Unset fields (-1, empty) are read from the environment by
// resolved().
struct RendezvousOptions {
  int rank = -1;        // -1: from RANK
  int world_size = -1;  // -1: from WORLD_SIZE
  int local_rank = -1;  // -1: from LOCAL_RANK, else rank (the device this rank uses)
  std::string master_addr;  // empty: from MASTER_ADDR
  int master_port = -1;     // -1: from MASTER_PORT
  // A directory on a filesystem all ranks share: a FileStore there instead of a TCP store.
  std::string store_path;
  // How long connecting to the store, and each wait in it, may take (the store's timeout).
  std::chrono::milliseconds timeout{std::chrono::minutes(5)};

  // These options with every unset field taken from `environment` (the process's variables
  // when nullptr). MASTER_ADDR and MASTER_PORT are needed only without a store_path.
  // @param environment the variables to read instead of the process's (tests), or nullptr
  // @return a copy with rank, world_size, local_rank and, without a store_path, master_addr and
  //   master_port set
  // @throws InvalidArgumentError naming the variable and its value when one is
  // missing, not a number, or out of range (rank outside 0..world_size-1, a port outside
  // 1..65535), or when the timeout is not positive.
  [[nodiscard]] RendezvousOptions resolved(const std::map<std::string, std::string>* environment = nullptr) const;
};

// The store the ranks of `options` (resolved) meet in: a FileStore when store_path is set,
// else a TcpStore, rank 0 hosting its server on master_port (on every interface). Blocks until
// the store is reached.
// @param options resolved options (RendezvousOptions::resolved())
// @return the store, which keeps rank 0's server alive
// @throws NcclError when the store cannot be reached or bound in time (naming the address and
// the rank).
// @throws InvalidArgumentError for a master_port outside 1..65535 (options not resolved).
[[nodiscard]] std::shared_ptr<Store> make_store(const RendezvousOptions& options);

}  // namespace cudakit::nccl
