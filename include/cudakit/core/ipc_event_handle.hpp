#pragma once
// @brief The portable form of an interprocess event: 64 opaque bytes, with a hex text form for
// passing between processes on a command line or through a file.

#include <array>
#include <string>
#include <string_view>

namespace cudakit {

struct IpcEventHandle {
  static constexpr std::size_t kSize = 64;  // sizeof(cudaIpcEventHandle_t)
  std::array<unsigned char, kSize> bytes{};

  // 128 lowercase hex digits.
  [[nodiscard]] std::string to_hex() const;
  // @throws InvalidArgumentError unless `hex` is exactly 128 hex digits.
  static IpcEventHandle from_hex(std::string_view hex);
  friend bool operator==(const IpcEventHandle&, const IpcEventHandle&) = default;
};

}  // namespace cudakit
