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

struct RendezvousOptions {
  int rank = -1;        // -1: from RANK
  int world_size = -1;  // -1: from WORLD_SIZE
  int local_rank = -1;  // -1: from LOCAL_RANK, else rank (the device this rank uses)
  std::string master_addr;  // empty: from MASTER_ADDR
  int master_port = -1;     // -1: from MASTER_PORT
  // A directory on a filesystem all ranks share: a FileStore there instead of a TCP store.
  std::string store_path;
  std::chrono::milliseconds timeout{std::chrono::minutes(5)};

  // These options with every unset field taken from `environment` (the process's variables
  // when nullptr). @throws InvalidArgumentError naming the variable and its value when one is
  // missing, not a number, or out of range (rank outside 0..world_size-1, a port outside
  // 1..65535).
  [[nodiscard]] RendezvousOptions resolved(const std::map<std::string, std::string>* environment = nullptr) const;
};

// The store the ranks of `options` (resolved) meet in: a FileStore when store_path is set,
// else a TcpStore, rank 0 hosting its server on master_port. @throws NcclError when the store
// cannot be reached or bound in time (naming the address and the rank).
[[nodiscard]] std::shared_ptr<Store> make_store(const RendezvousOptions& options);

}  // namespace cudakit::nccl
