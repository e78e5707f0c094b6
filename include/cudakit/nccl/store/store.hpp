#pragma once
// @brief Store: the key-value store through which the ranks of a communicator meet (the NCCL unique
// id, barriers, the flight recorders' exchange). TcpStore and FileStore implement it.

#include <chrono>
#include <cstdint>
#include <span>
#include <string>

namespace cudakit::nccl {

class Store {
 public:
  virtual ~Store() = default;
  // Sets `key` to `value`, waking every rank that waits for it. @throws NcclError when the
  // store cannot be reached (naming its address and this rank).
  virtual void set(const std::string& key, const std::string& value) = 0;
  // The value of `key`, waiting for it up to timeout(). @throws NcclError on a timeout, naming
  // the key, the store's address and this rank.
  [[nodiscard]] virtual std::string get(const std::string& key) = 0;
  // Adds `delta` to the integer at `key` (0 when absent) and returns the new value.
  virtual std::int64_t add(const std::string& key, std::int64_t delta) = 0;
  // Whether every key exists, without waiting.
  [[nodiscard]] virtual bool check(std::span<const std::string> keys) = 0;
  // Waits until every key exists, up to `timeout`. @throws NcclError on a timeout, naming the
  // keys still missing.
  virtual void wait(std::span<const std::string> keys, std::chrono::milliseconds timeout) = 0;
  void wait(std::span<const std::string> keys) { wait(keys, timeout()); }

  // The default timeout of get and wait.
  [[nodiscard]] std::chrono::milliseconds timeout() const noexcept { return timeout_; }
  void set_timeout(std::chrono::milliseconds timeout) noexcept { timeout_ = timeout; }
  // This process's rank, for messages (-1 where unknown).
  [[nodiscard]] int rank() const noexcept { return rank_; }
  // What messages call the store ("tcp://10.0.0.1:29500", "file:///shared/rdzv").
  [[nodiscard]] virtual std::string address() const = 0;

 protected:
  Store(int rank, std::chrono::milliseconds timeout) noexcept : timeout_(timeout), rank_(rank) {}

 private:
  std::chrono::milliseconds timeout_;
  int rank_;
};

// Waits until `world_size` ranks have reached the barrier `name` (each calls this once), up to
// the store's timeout. @throws NcclError naming how many arrived.
void store_barrier(Store& store, const std::string& name, int world_size);

}  // namespace cudakit::nccl
