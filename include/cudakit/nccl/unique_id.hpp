#pragma once
// @brief UniqueId: the token from which the ranks of one communicator find each other
// (ncclUniqueId), made by one rank and handed to the others (through a Store, or any channel of
// one's own).

#include <array>
#include <string>
#include <string_view>

namespace cudakit::nccl {

// The bytes of an ncclUniqueId: opaque, made by unique_id() on one rank and passed as they are to
// Communicator::init_rank() on every rank of the communicator.
struct UniqueId {
  static constexpr std::size_t kBytes = 128;  // NCCL_UNIQUE_ID_BYTES
  std::array<char, kBytes> bytes{};  // the id, as NCCL made it

  // The id as a string of kBytes bytes (not text: it may hold any byte), for a Store or a
  // channel of one's own.
  // @return a copy of `bytes`.
  [[nodiscard]] std::string to_bytes() const { return std::string(bytes.data(), bytes.size()); }
  // The id to_bytes() gave.
  // @param data exactly kBytes bytes
  // @return the id those bytes hold
  // @throws InvalidArgumentError when `data` is not kBytes long.
  [[nodiscard]] static UniqueId from_bytes(std::string_view data);
};

// A new id (ncclGetUniqueId; it starts NCCL's bootstrap listener in this process, which the other
// ranks connect to: make it on the rank that is to host the bootstrap, usually rank 0).
// @return the new id
// @throws StateError when NCCL is not available.
// @throws NcclError when ncclGetUniqueId fails (no network interface NCCL can use, ...).
[[nodiscard]] UniqueId unique_id();

}  // namespace cudakit::nccl
