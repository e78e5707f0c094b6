#pragma once
// @brief Store: the key-value store through which the ranks of a communicator meet (the NCCL unique
// id, barriers, the flight recorders' exchange). TcpStore and FileStore implement it.

#include <chrono>
#include <cstdint>
#include <span>
#include <string>

namespace cudakit::nccl {

// A key-value store shared by the ranks of a job (torch.distributed.Store's role): values are
// byte strings, keys are set once or counted with add(), and readers wait for keys that are not
// there yet. Every call blocks the calling thread until the store answers (or the timeout).
class Store {
 public:
  virtual ~Store() = default;
  // Sets `key` to `value`, waking every rank that waits for it.
  // @param key the key (any bytes)
  // @param value the value (any bytes)
  // @throws NcclError when the store cannot be reached (naming its address and this rank).
  // @throws InvalidArgumentError (TcpStore) when key and value exceed the size of one store
  //   message.
  virtual void set(const std::string& key, const std::string& value) = 0;
  // The value of `key`, waiting for it up to timeout().
  // @param key the key to read
  // @return its value
  // @throws NcclError on a timeout, naming the key, the store's address and this rank.
  [[nodiscard]] virtual std::string get(const std::string& key) = 0;
  // Adds `delta` to the integer at `key` (0 when absent), atomically across the ranks.
  // @param key the counter's key
  // @param delta what to add (may be negative; 0 reads the counter)
  // @return the new value
  // @throws NcclError when the store cannot be reached or did not answer in time, and (TcpStore)
  //   when the key holds a value that is no decimal integer; the value is then left as it was.
  // @throws InvalidArgumentError (FileStore) when the key holds a value that is no decimal
  //   integer; the value is then left as it was.
  virtual std::int64_t add(const std::string& key, std::int64_t delta) = 0;
  // Whether every key exists, without waiting for them.
  // @param keys the keys to look for
  // @return true when all of them are set
  // @throws NcclError when the store cannot be reached.
  [[nodiscard]] virtual bool check(std::span<const std::string> keys) = 0;
  // Waits until every key exists, up to `timeout`.
  // @param keys the keys to wait for
  // @param timeout how long to wait at most
  // @throws NcclError on a timeout, naming the keys still missing.
  virtual void wait(std::span<const std::string> keys, std::chrono::milliseconds timeout) = 0;
  // Waits until every key exists, up to timeout().
  // @param keys the keys to wait for
  // @throws NcclError on a timeout, naming the keys still missing.
  void wait(std::span<const std::string> keys) { wait(keys, timeout()); }

  // @return the default timeout of get and wait.
  [[nodiscard]] std::chrono::milliseconds timeout() const noexcept { return timeout_; }
  // Replaces the default timeout of get and wait (not thread-safe against calls in flight).
  // @param timeout the new default
  void set_timeout(std::chrono::milliseconds timeout) noexcept { timeout_ = timeout; }
  // @return this process's rank, for messages (-1 where unknown).
  [[nodiscard]] int rank() const noexcept { return rank_; }
  // @return what messages call the store ("tcp://10.0.0.1:29500", "file:///shared/rdzv").
  [[nodiscard]] virtual std::string address() const = 0;

 protected:
  // For the implementations.
  // @param rank this process's rank, for messages (-1 where unknown)
  // @param timeout the default timeout of get and wait
  Store(int rank, std::chrono::milliseconds timeout) noexcept : timeout_(timeout), rank_(rank) {}

 private:
  std::chrono::milliseconds timeout_;
  int rank_;
};

// Waits until `world_size` ranks have reached the barrier `name` (each calls this once), up to
// the store's timeout. The barrier is counted in keys under "barrier/<name>/", so a name is used
// once per job.
// @param store the store the ranks share
// @param name the barrier's name, the same on every rank
// @param world_size how many ranks must arrive
// @throws NcclError naming how many arrived, on a timeout.
// @throws StateError when more than `world_size` ranks arrive (a name used twice).
void store_barrier(Store& store, const std::string& name, int world_size);

}  // namespace cudakit::nccl
