#include "cudakit/nccl/store/detail/store_message.hpp"

#include <charconv>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/error.hpp"

namespace cudakit::nccl::detail {
namespace {

using cudakit::detail::concat;

void put_u32(std::string& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

std::uint32_t get_u32(std::string_view bytes, std::size_t at) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= std::uint32_t(static_cast<unsigned char>(bytes[at + i])) << (8 * i);
  return v;
}

bool known_type(std::uint8_t t) {
  return (t >= std::uint8_t(StoreMessageType::set) && t <= std::uint8_t(StoreMessageType::ping)) ||
         (t >= std::uint8_t(StoreMessageType::ok) && t <= std::uint8_t(StoreMessageType::error));
}

[[noreturn]] void refuse(std::string_view what) {
  throw InvalidArgumentError("decode_store_message", concat("malformed store message: ", what));
}

}  // namespace

const char* to_string(StoreMessageType type) noexcept {
  switch (type) {
    case StoreMessageType::set: return "set";
    case StoreMessageType::get: return "get";
    case StoreMessageType::add: return "add";
    case StoreMessageType::check: return "check";
    case StoreMessageType::wait: return "wait";
    case StoreMessageType::ping: return "ping";
    case StoreMessageType::ok: return "ok";
    case StoreMessageType::value: return "value";
    case StoreMessageType::number: return "number";
    case StoreMessageType::boolean: return "boolean";
    case StoreMessageType::error: return "error";
  }
  return "unknown";
}

std::string encode_store_message(const StoreMessage& message) {
  if (message.fields.size() > kMaxStoreFields)
    throw InvalidArgumentError("encode_store_message",
                               concat(message.fields.size(), " fields exceed the limit of ", kMaxStoreFields));
  std::size_t body = 1 + 4;
  for (const std::string& f : message.fields) body += 4 + f.size();
  if (body > kMaxStoreFrameBytes)
    throw InvalidArgumentError("encode_store_message", concat("a ", body, "-byte message exceeds the limit of ",
                                                              kMaxStoreFrameBytes, " bytes"));
  std::string out;
  out.reserve(4 + body);
  put_u32(out, static_cast<std::uint32_t>(body));
  out.push_back(static_cast<char>(message.type));
  put_u32(out, static_cast<std::uint32_t>(message.fields.size()));
  for (const std::string& f : message.fields) {
    put_u32(out, static_cast<std::uint32_t>(f.size()));
    out += f;
  }
  return out;
}

std::optional<DecodedStoreMessage> decode_store_message(std::string_view bytes) {
  if (bytes.size() < 4) return std::nullopt;
  const std::uint32_t body = get_u32(bytes, 0);
  if (body > kMaxStoreFrameBytes)
    refuse(concat("a body of ", body, " bytes exceeds the limit of ", kMaxStoreFrameBytes));
  if (body < 5) refuse(concat("a body of ", body, " bytes is shorter than its 5-byte header"));
  if (bytes.size() < 4 + std::size_t(body)) return std::nullopt;
  const std::string_view frame = bytes.substr(4, body);
  const auto type = static_cast<std::uint8_t>(frame[0]);
  if (!known_type(type)) refuse(concat("unknown type ", int(type)));
  const std::uint32_t count = get_u32(frame, 1);
  if (count > kMaxStoreFields) refuse(concat(count, " fields exceed the limit of ", kMaxStoreFields));
  // Each field takes at least its 4-byte length: a count the body cannot hold is refused before
  // anything is reserved for it.
  if (std::size_t(count) * 4 > frame.size() - 5)
    refuse(concat(count, " fields cannot fit in a body of ", body, " bytes"));
  DecodedStoreMessage out;
  out.message.type = static_cast<StoreMessageType>(type);
  out.message.fields.reserve(count);
  std::size_t at = 5;
  for (std::uint32_t i = 0; i < count; ++i) {
    if (frame.size() - at < 4) refuse(concat("field ", i, "'s length runs past the body"));
    const std::uint32_t length = get_u32(frame, at);
    at += 4;
    if (frame.size() - at < length)
      refuse(concat("field ", i, " of ", length, " bytes runs past the body (", frame.size() - at, " left)"));
    out.message.fields.emplace_back(frame.substr(at, length));
    at += length;
  }
  if (at != frame.size()) refuse(concat(frame.size() - at, " bytes after the last field"));
  out.consumed = 4 + std::size_t(body);
  return out;
}

std::int64_t parse_store_number(std::string_view text, const char* what) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty())
    throw InvalidArgumentError("parse_store_number", concat(what, " is not a decimal integer: '", text, "'"));
  return v;
}

}  // namespace cudakit::nccl::detail
