#pragma once
// The TCP store's wire format: what its server and clients send each other. See Note [Store
// messages].

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cudakit::nccl::detail {

// Note [Store messages]
// Every message, request or reply, is one frame:
//   u32 body_bytes | body
//   body: u8 type | u32 field_count | field_count x (u32 bytes | bytes)
// in little-endian order. Requests: set(key, value), get(key), add(key, decimal delta),
// check(key...), wait(timeout_ms, key...), ping(). Replies: ok(), value(bytes),
// number(decimal), bool("0"/"1"), error(text). Numbers travel as decimal text so that the
// format has one kind of field. A frame is refused (InvalidArgumentError) when its body is larger
// than kMaxStoreFrameBytes, its type is unknown, its field count exceeds kMaxStoreFields or its
// fields do not fill the body exactly: a reader never allocates more than the frame it was
// sent, and a bad peer cannot make it wait for bytes that will never come.
enum class StoreMessageType : std::uint8_t {
  set = 1, get, add, check, wait, ping,
  ok = 64, value, number, boolean, error,
};
[[nodiscard]] const char* to_string(StoreMessageType type) noexcept;

inline constexpr std::size_t kMaxStoreFrameBytes = 64u << 20;
inline constexpr std::size_t kMaxStoreFields = 4096;

struct StoreMessage {
  StoreMessageType type = StoreMessageType::ping;
  std::vector<std::string> fields;
  friend bool operator==(const StoreMessage&, const StoreMessage&) = default;
};

// The frame of `message`. @throws InvalidArgumentError when it would exceed the limits above.
[[nodiscard]] std::string encode_store_message(const StoreMessage& message);

// Reads one frame from the front of `bytes`: the message and the bytes it took, or nullopt
// while the frame is incomplete. @throws InvalidArgumentError for a malformed frame (see Note
// [Store messages]), naming what was wrong.
struct DecodedStoreMessage {
  StoreMessage message;
  std::size_t consumed = 0;
};
[[nodiscard]] std::optional<DecodedStoreMessage> decode_store_message(std::string_view bytes);

// A field read as a decimal integer. @throws InvalidArgumentError naming `what` and the text.
[[nodiscard]] std::int64_t parse_store_number(std::string_view text, const char* what);

}  // namespace cudakit::nccl::detail
