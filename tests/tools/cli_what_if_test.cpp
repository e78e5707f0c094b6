// `cudakit alloc-replay SNAPSHOT`, from the built binary: the what-if table and its JSON, the first
// operation that does not fit with its Python frame, and the errors for bad snapshots and options.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "support/cudakit_cli.hpp"
#include "support/paths.hpp"
#include "support/scratch_dir.hpp"
#include "support/test_files.hpp"

namespace {

namespace fs = std::filesystem;
using cudakit::testing::CliRun;

std::string memory_fixture(const std::string& name) {
  return (fs::path(cudakit::testing::test_data_dir()) / "memory" / name).string();
}

class WhatIfCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(cudakit::testing::cudakit_cli_path()))
      GTEST_SKIP() << cudakit::testing::cudakit_cli_path() << " is not built";
  }
  CliRun cudakit(const std::vector<std::string>& args) { return cudakit::testing::run_cudakit(args, dir_.path()); }
  void expect_error(const std::vector<std::string>& args, int status, const std::string& part) {
    const CliRun run = cudakit(args);
    EXPECT_EQ(run.status, status) << run.err;
    EXPECT_NE(run.err.find(part), std::string::npos) << "stderr:\n" << run.err << "expected:\n" << part;
    EXPECT_EQ(run.out, "");
  }
  cudakit::testing::ScratchDir dir_;
};

TEST_F(WhatIfCli, PrintsEachAllocatorAndWhereItRunsOut) {
  const CliRun run = cudakit({"alloc-replay", memory_fixture("whatif_small.pickle"), "--host-capacity-gib", "0.03"});
  ASSERT_EQ(run.status, 0) << run.err;
  for (const char* part : {"2 block(s) (7.0 MiB) were allocated before the trace began", "1 empty_cache() call(s)",
                           "its peak reserved, from the trace's segment events: 42.0 MiB",
                           "the recorded setting 'release_lock_on_cudamalloc:True' does not change the models",
                           "cudakit (default)", "torch, expandable_segments:False", "torch, expandable_segments:True",
                           "cudaMallocAsync-like pool", "fits in 30.7 MiB",
                           "torch, expandable_segments:False: op 5 (trace entry 6): alloc of 6.0 MiB on stream 0x5b00, "
                           "at /home/user/train.py:14 in step"}) {
    EXPECT_NE(run.out.find(part), std::string::npos) << part << "\n" << run.out;
  }
  EXPECT_EQ(run.err, "");
}

TEST_F(WhatIfCli, WritesJsonForEveryDevice) {
  const CliRun run = cudakit({"alloc-replay", memory_fixture("whatif_small.json"), "--host-capacity-gib", "0.03",
                              "--json", "--conf", "max_split_size_mb:128"});
  ASSERT_EQ(run.status, 0) << run.err;
  const nlohmann::json j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j["format"], "JSON");
  ASSERT_EQ(j["devices"].size(), 1u);
  const nlohmann::json& d = j["devices"][0];
  EXPECT_EQ(d["seeded_blocks"], 2);
  EXPECT_EQ(d["recorded_peak_reserved_bytes"], 42 << 20);
  ASSERT_EQ(d["allocators"].size(), 4u);
  EXPECT_EQ(d["allocators"][1]["allocator"], "torch_segments");
  EXPECT_EQ(d["allocators"][1]["fits"], false);
  EXPECT_EQ(d["allocators"][1]["first_failure"]["trace_entry"], 6);
  EXPECT_EQ(d["allocators"][1]["first_failure"]["frame"]["line"], 14);
  EXPECT_EQ(d["allocators"][3]["fits"], true);
}

TEST_F(WhatIfCli, SaysWhatIsWrongWithASnapshot) {
  expect_error({"alloc-replay", memory_fixture("whatif_no_trace.pickle")}, 1,
               "the snapshot has no trace entries: record them with "
               "torch.cuda.memory._record_memory_history(max_entries=1000000)");
  expect_error({"alloc-replay", memory_fixture("whatif_not_snapshot.pickle")}, 1, "not a memory snapshot");
  const std::string whole = cudakit::testing::read_file(memory_fixture("whatif_small.pickle"));
  cudakit::testing::write_file(dir_.path() / "cut.pickle", whole.substr(0, whole.size() / 3));
  expect_error({"alloc-replay", "cut.pickle"}, 1, "cut.pickle: pickle opcode");
  expect_error({"alloc-replay", "cut.pickle"}, 1, "the file is truncated");
  cudakit::testing::write_file(dir_.path() / "code.pickle", "\x80\x02" "cos\nsystem\n.");
  expect_error({"alloc-replay", "code.pickle"}, 1,
               "code.pickle: pickle opcode GLOBAL (0x63) at offset 2: it refers to Python code");
  expect_error({"alloc-replay", memory_fixture("whatif_small.pickle"), "--device", "3"}, 1,
               "device 3 has no trace entries (devices with entries: 0)");
}

TEST_F(WhatIfCli, RefusesOptionsThatDoNotApply) {
  expect_error({"alloc-replay", memory_fixture("whatif_small.pickle"), "--backend", "device"}, 2,
               "cudakit alloc-replay: a snapshot replays on host models of each allocator; --backend device applies "
               "to CSV traces only");
  cudakit::testing::write_file(dir_.path() / "replay.csv", "op,id,size,stream\na,1,1024,s0\nf,1,0,s0\n");
  expect_error({"alloc-replay", "replay.csv", "--backend", "host", "--device", "1"}, 2,
               "cudakit alloc-replay: --device picks a device of a snapshot; a CSV trace has one");
  expect_error({"alloc-replay", memory_fixture("whatif_small.pickle"), "--conf", "max_split_size_mb:x"}, 2,
               "--conf takes allocator options");
}

}  // namespace
