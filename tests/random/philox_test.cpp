// Philox4x32-10 against the known-answer vectors of Random123 (kat_vectors, philox4x32_10).

#include <gtest/gtest.h>

#include "cudakit/random/detail/philox.hpp"

namespace {

using cudakit::random::detail::philox4x32_10;
using cudakit::random::detail::philox_block;
using cudakit::random::detail::PhiloxWords;

void expect_words(PhiloxWords got, PhiloxWords want) {
  EXPECT_EQ(got.x, want.x);
  EXPECT_EQ(got.y, want.y);
  EXPECT_EQ(got.z, want.z);
  EXPECT_EQ(got.w, want.w);
}

TEST(Philox, KnownAnswerZeros) {
  expect_words(philox4x32_10({0, 0, 0, 0}, 0, 0),
               {0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u});
}

TEST(Philox, KnownAnswerOnes) {
  expect_words(philox4x32_10({0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}, 0xffffffffu,
                             0xffffffffu),
               {0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu});
}

TEST(Philox, KnownAnswerPi) {
  expect_words(philox4x32_10({0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}, 0xa4093822u,
                             0x299f31d0u),
               {0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u});
}

// See Note [Counter layout]: counter = (block lo, block hi, 0, 0), key = (seed lo, seed hi).
TEST(Philox, BlockLayout) {
  const std::uint64_t seed = 0x0123456789abcdefull, block = 0xfedcba9876543210ull;
  expect_words(philox_block(seed, block),
               philox4x32_10({0x76543210u, 0xfedcba98u, 0, 0}, 0x89abcdefu, 0x01234567u));
  // Neighbouring counters give unrelated words.
  const PhiloxWords a = philox_block(1, 0), b = philox_block(1, 1);
  EXPECT_NE(a.x, b.x);
  EXPECT_NE(a.w, b.w);
}

}  // namespace
