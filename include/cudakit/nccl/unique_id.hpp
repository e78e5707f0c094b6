#pragma once
// @brief UniqueId: the token from which the ranks of one communicator find each other
// (ncclUniqueId), made by one rank and handed to the others (through a Store, or any channel of
// one's own).

#include <array>
#include <string>
#include <string_view>

namespace cudakit::nccl {

struct UniqueId {
  static constexpr std::size_t kBytes = 128;  // NCCL_UNIQUE_ID_BYTES
  std::array<char, kBytes> bytes{};

  [[nodiscard]] std::string to_bytes() const { return std::string(bytes.data(), bytes.size()); }
  // @throws InvalidArgumentError when `data` is not kBytes long.
  [[nodiscard]] static UniqueId from_bytes(std::string_view data);
};

// A new id (ncclGetUniqueId; it starts NCCL's bootstrap listener in this process).
// @throws StateError when NCCL is not available, NcclError when the call fails.
[[nodiscard]] UniqueId unique_id();

}  // namespace cudakit::nccl
