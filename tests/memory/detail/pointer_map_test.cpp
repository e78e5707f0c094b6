// The allocator's live-block map against std::unordered_map, with the keys it really sees:
// 512-byte-aligned addresses packed into a few megabytes, inserted and erased out of order so
// that probe runs form, wrap around the table's end and are shifted back on erase.

#include "memory/detail/pointer_map.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <unordered_map>
#include <vector>

namespace cudakit::memory::detail {
namespace {

struct Value {
  int id = 0;
};

const void* address(std::uintptr_t slot) { return reinterpret_cast<const void*>(0x7f0000000000ull + slot * 512); }

TEST(PointerMap, AgreesWithUnorderedMapUnderChurnAndGrowth) {
  PointerMap<Value> map;
  std::unordered_map<const void*, Value*> reference;
  std::vector<Value> values(4096);
  for (int i = 0; i < static_cast<int>(values.size()); ++i) values[i].id = i;
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<std::uintptr_t> slot(0, values.size() - 1);

  for (int step = 0; step < 200000; ++step) {
    // The live count climbs to nearly all 4096 keys and falls back to ~800, twice: the map
    // grows from its first 128 slots and churns at every load it passes through.
    const bool filling = (step / 50000) % 2 == 0;
    const std::uintptr_t s = slot(rng);
    const void* key = address(s);
    const bool present = reference.contains(key);
    if (!present && (filling || rng() % 4 == 0)) {
      map.insert(key, &values[s]);
      reference.emplace(key, &values[s]);
    } else if (present) {
      ASSERT_EQ(map.erase(key), reference.at(key)) << "step " << step;
      reference.erase(key);
    } else {
      ASSERT_EQ(map.erase(key), nullptr) << "erasing an absent key, step " << step;
    }
    ASSERT_EQ(map.size(), reference.size()) << "step " << step;
    if (step % 997 == 0) {
      for (std::uintptr_t k = 0; k < values.size(); ++k) {
        auto it = reference.find(address(k));
        ASSERT_EQ(map.find(address(k)), it == reference.end() ? nullptr : it->second) << "key " << k;
      }
    }
  }
  std::size_t visited = 0;
  map.for_each([&](const void* key, Value* value) {
    ++visited;
    EXPECT_EQ(reference.at(key), value);
  });
  EXPECT_EQ(visited, reference.size());
}

}  // namespace
}  // namespace cudakit::memory::detail
