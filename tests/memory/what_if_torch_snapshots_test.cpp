// Host tier: the what-if replays' torch rows on snapshots recorded from real torch programs on an
// H200, against the peaks torch itself reported (tests/data/memory/torch-snapshots/README.md).

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "cudakit/memory/snapshot_trace.hpp"
#include "cudakit/memory/what_if_replay.hpp"
#include "nlohmann/json.hpp"
#include "support/paths.hpp"

namespace cudakit::memory {
namespace {

std::string dir() { return cudakit::testing::test_data_dir() + "/memory/torch-snapshots/"; }

TEST(WhatIfTorchSnapshots, TheTorchRowsReplayToThePeaksTorchReported) {
  for (const char* name : {"train-default", "train-expandable", "serve-default", "serve-expandable"}) {
    SCOPED_TRACE(name);
    std::ifstream in(dir() + name + ".peaks.json");
    const nlohmann::json peaks = nlohmann::json::parse(in);
    const SnapshotTrace snapshot = load_snapshot_trace(dir() + name + ".pickle.gz");
    ASSERT_EQ(snapshot.devices.size(), 1u);
    WhatIfOptions options;
    options.torch_config = snapshot.settings;
    const std::vector<WhatIfRow> rows = replay_what_if(snapshot.devices[0], options);
    const WhatIfAllocator recorded_with =
        snapshot.settings.expandable_segments ? WhatIfAllocator::torch_expandable : WhatIfAllocator::torch_segments;
    EXPECT_EQ(snapshot.settings.expandable_segments, peaks["allocator_conf"] == "expandable_segments:True");
    for (const WhatIfRow& row : rows) {
      if (row.allocator != recorded_with) continue;
      const auto reserved = peaks["max_memory_reserved"].get<double>();
      const auto allocated = peaks["max_memory_allocated"].get<double>();
      EXPECT_NEAR(static_cast<double>(row.peak_reserved), reserved, 0.02 * reserved);
      EXPECT_NEAR(static_cast<double>(row.peak_allocated), allocated, 0.02 * allocated);
      EXPECT_FALSE(row.stopped.has_value());
    }
    // The trace's own segment events, counted back from the final segments, say the same.
    ASSERT_TRUE(snapshot.devices[0].recorded_peak_reserved.has_value());
    EXPECT_EQ(*snapshot.devices[0].recorded_peak_reserved, peaks["max_memory_reserved"].get<std::uint64_t>());
  }
}

}  // namespace
}  // namespace cudakit::memory
