#include "cudakit/nccl/store/detail/store_message.hpp"

#include <gtest/gtest.h>

#include "support/expect_refused.hpp"

namespace {

using cudakit::nccl::detail::decode_store_message;
using cudakit::nccl::detail::encode_store_message;
using cudakit::nccl::detail::parse_store_number;
using cudakit::nccl::detail::StoreMessage;
using cudakit::nccl::detail::StoreMessageType;
using cudakit::testing::expect_refused;

std::string u32(std::uint32_t v) {
  std::string s;
  for (int i = 0; i < 4; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  return s;
}

TEST(StoreMessage, RoundTripsEveryTypeWithBinaryFields) {
  for (StoreMessageType type : {StoreMessageType::set, StoreMessageType::wait, StoreMessageType::value,
                                StoreMessageType::error}) {
    const StoreMessage m{type, {"key", std::string("\0\xff\n", 3), ""}};
    const std::string frame = encode_store_message(m);
    const auto decoded = decode_store_message(frame);
    ASSERT_TRUE(decoded);
    EXPECT_EQ(decoded->message, m);
    EXPECT_EQ(decoded->consumed, frame.size());
  }
}

TEST(StoreMessage, IncompleteFramesWaitAndTwoFramesDecodeOneAtATime) {
  const std::string a = encode_store_message({StoreMessageType::get, {"alpha"}});
  const std::string b = encode_store_message({StoreMessageType::ping, {}});
  for (std::size_t cut = 0; cut < a.size(); ++cut) EXPECT_FALSE(decode_store_message(a.substr(0, cut))) << cut;
  const std::string both = a + b;
  const auto first = decode_store_message(both);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->message.fields.at(0), "alpha");
  const auto second = decode_store_message(std::string_view(both).substr(first->consumed));
  ASSERT_TRUE(second);
  EXPECT_EQ(second->message.type, StoreMessageType::ping);
}

TEST(StoreMessage, MalformedFramesAreRefusedNamingTheFault) {
  expect_refused([] { (void)decode_store_message(u32(1u << 30)); }, "exceeds the limit");
  expect_refused([] { (void)decode_store_message(u32(2) + "ab"); }, "shorter than its 5-byte header");
  expect_refused([] { (void)decode_store_message(u32(5) + std::string(1, char(200)) + u32(0)); }, "unknown type 200");
  // A field count the body cannot hold: refused before anything is reserved for it.
  expect_refused([] { (void)decode_store_message(u32(5) + std::string(1, char(1)) + u32(4000)); }, "cannot fit");
  expect_refused([] { (void)decode_store_message(u32(9) + std::string(1, char(1)) + u32(1) + u32(10)); },
                 "runs past the body");
  expect_refused([] { (void)decode_store_message(u32(7) + std::string(1, char(6)) + u32(0) + "xy"); },
                 "2 bytes after the last field");
}

TEST(StoreMessage, NumbersAreDecimalOrRefused) {
  EXPECT_EQ(parse_store_number("-42", "delta"), -42);
  expect_refused([] { (void)parse_store_number("4x", "the delta"); }, "the delta is not a decimal integer: '4x'");
  expect_refused([] { (void)parse_store_number("", "the delta"); }, "''");
}

}  // namespace
