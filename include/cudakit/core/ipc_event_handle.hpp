#pragma once
// @brief The portable form of an interprocess event: 64 opaque bytes, with a hex text form for
// passing between processes on a command line or through a file.

#include <array>
#include <string>
#include <string_view>

namespace cudakit {

// An interprocess event handle (cudaIpcEventHandle_t) as plain bytes, so that public headers need
// not name the runtime's type. Get one from Event::ipc_handle(), open it with
// Event::from_ipc_handle().
struct IpcEventHandle {
  static constexpr std::size_t kSize = 64;  // sizeof(cudaIpcEventHandle_t)
  // The runtime's handle, byte for byte.
  std::array<unsigned char, kSize> bytes{};

  // 128 lowercase hex digits.
  // @return the handle as text, two digits per byte in order.
  [[nodiscard]] std::string to_hex() const;
  // The handle written by to_hex().
  // @param hex 128 hex digits, either case.
  // @return the handle.
  // @throws InvalidArgumentError unless `hex` is exactly 128 hex digits.
  static IpcEventHandle from_hex(std::string_view hex);
  // Handles are equal when their bytes are.
  friend bool operator==(const IpcEventHandle&, const IpcEventHandle&) = default;
};

}  // namespace cudakit
