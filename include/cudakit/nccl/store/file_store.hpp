#pragma once
// @brief FileStore: a store in a directory of a filesystem every rank sees (NFS, Lustre, a local
// directory for one host): one file per key, written whole and renamed into place, so that a
// reader sees a value complete or not at all; add() takes an flock() on the key's lock file.

#include <chrono>
#include <filesystem>
#include <string>

#include "cudakit/nccl/store/store.hpp"

namespace cudakit::nccl {

// A Store kept in files: for jobs whose ranks share a filesystem but not a reachable TCP port.
// Waits poll the directory (from 1 ms up to 50 ms apart). Its errors are NcclErrors naming the
// store's file:// address.
class FileStore final : public Store {
 public:
  // Uses (and creates) `directory`.
  // @param directory where the keys' files go; every rank passes the same directory
  // @param rank this process's rank, for messages
  // @param timeout the default timeout of get and wait
  // @throws NcclError when it cannot be created.
  FileStore(std::filesystem::path directory, int rank, std::chrono::milliseconds timeout);

  void set(const std::string& key, const std::string& value) override;
  [[nodiscard]] std::string get(const std::string& key) override;
  std::int64_t add(const std::string& key, std::int64_t delta) override;
  [[nodiscard]] bool check(std::span<const std::string> keys) override;
  void wait(std::span<const std::string> keys, std::chrono::milliseconds timeout) override;
  using Store::wait;
  [[nodiscard]] std::string address() const override;

 private:
  [[nodiscard]] std::filesystem::path path_of(const std::string& key) const;
  std::filesystem::path directory_;
};

}  // namespace cudakit::nccl
