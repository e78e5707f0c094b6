// Host tier: the registry of streams cudakit made (its keys are handles only: no stream is
// created here), including the nodes it reuses from streams gone (See Note [Creating a stream]).

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <vector>

#include "cudakit/core/detail/stream_registry.hpp"

namespace {

using cudakit::detail::known_stream_serial;
using cudakit::detail::note_stream_created;
using cudakit::detail::note_stream_gone;

cudaStream_t fake(std::uintptr_t n) { return reinterpret_cast<cudaStream_t>(0x7f0000000000u + 16 * n); }

TEST(StreamRegistry, DefaultStreamsAreAlwaysKnownAndOthersOnlyWhileAlive) {
  EXPECT_EQ(known_stream_serial(nullptr), cudakit::detail::kDefaultStreamSerial);
  EXPECT_EQ(known_stream_serial(cudaStreamLegacy), cudakit::detail::kDefaultStreamSerial);
  EXPECT_EQ(known_stream_serial(cudaStreamPerThread), cudakit::detail::kDefaultStreamSerial);
  EXPECT_EQ(known_stream_serial(fake(1)), 0u);
  note_stream_created(fake(1));
  const std::uint64_t first = known_stream_serial(fake(1));
  EXPECT_GT(first, cudakit::detail::kDefaultStreamSerial);
  note_stream_gone(fake(1));
  EXPECT_EQ(known_stream_serial(fake(1)), 0u);
  note_stream_gone(fake(1));  // twice: nothing to forget
  EXPECT_EQ(known_stream_serial(fake(1)), 0u);
}

TEST(StreamRegistry, SerialsAreNeverReusedThroughManyCreatesAndDestroys) {
  // More streams gone than the registry keeps spare nodes for, then more made than it has spare:
  // every stream alive keeps its own serial, and no serial comes back.
  std::set<std::uint64_t> seen;
  for (int round = 0; round < 3; ++round) {
    std::vector<cudaStream_t> alive;
    for (std::uintptr_t i = 0; i < 100; ++i) {
      alive.push_back(fake(1000 + i));
      note_stream_created(alive.back());
    }
    for (cudaStream_t s : alive) {
      const std::uint64_t serial = known_stream_serial(s);
      EXPECT_NE(serial, 0u);
      EXPECT_TRUE(seen.insert(serial).second) << "serial " << serial << " given twice";
    }
    for (cudaStream_t s : alive) note_stream_gone(s);
    for (cudaStream_t s : alive) EXPECT_EQ(known_stream_serial(s), 0u);
  }
}

TEST(StreamRegistry, AHandleCreatedAgainBeforeItsGoneTakesTheNewSerial) {
  note_stream_created(fake(5000));
  note_stream_created(fake(5001));
  note_stream_gone(fake(5001));  // leaves a spare node for the next create
  const std::uint64_t before = known_stream_serial(fake(5000));
  note_stream_created(fake(5000));  // a handle the runtime reused, the old one never reported gone
  const std::uint64_t after = known_stream_serial(fake(5000));
  EXPECT_GT(after, before);
  note_stream_gone(fake(5000));
  EXPECT_EQ(known_stream_serial(fake(5000)), 0u);
}

}  // namespace
