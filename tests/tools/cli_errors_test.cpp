// The `cudakit` tool's errors, from the built binary: every bad command line exits with 2 and one
// line naming the command, the option and what it takes; failures while running exit with 1; no
// error leaves an output file behind or changes one that was there; the good paths still work.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cudakit/core/device.hpp"
#include "support/cudakit_cli.hpp"
#include "support/paths.hpp"
#include "support/scratch_dir.hpp"
#include "support/test_files.hpp"

namespace {

namespace fs = std::filesystem;
using cudakit::testing::CliRun;
using cudakit::testing::run_cudakit;
using cudakit::testing::ScratchDir;
using cudakit::testing::read_file;
using cudakit::testing::write_file;

constexpr int kUsage = 2;
constexpr int kFailure = 1;

std::set<std::string> files_in(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.insert(entry.path().filename());
  return names;
}

std::string profiler_fixture(const std::string& name) {
  return (fs::path(cudakit::testing::test_data_dir()) / "profiler" / name).string();
}
std::string memory_fixture(const std::string& name) {
  return (fs::path(cudakit::testing::test_data_dir()) / "memory" / name).string();
}

std::string command_line(const std::vector<std::string>& args) {
  std::string command = "cudakit";
  for (const std::string& arg : args) command += " " + arg;
  return command;
}

// A two-stream allocation trace: alloc-replay's input.
const char* const kAllocTrace = "op,id,size,stream\na,1,1024,s0\na,2,4096,s1\nf,1,0,s0\nf,2,0,s1\n";

class CudakitCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(cudakit::testing::cudakit_cli_path()))
      GTEST_SKIP() << cudakit::testing::cudakit_cli_path() << " is not built";
    write_file(dir_.path() / "replay.csv", kAllocTrace);
  }
  CliRun cudakit(const std::vector<std::string>& args) { return run_cudakit(args, dir_.path()); }
  // Runs `args`, expects `status` and `message` as a line of its own on stderr, and nothing on
  // stdout for a usage error.
  void expect_error(const std::vector<std::string>& args, int status, const std::string& message) {
    SCOPED_TRACE(command_line(args));
    const CliRun run = cudakit(args);
    EXPECT_EQ(run.status, status) << run.err;
    EXPECT_NE(("\n" + run.err).find("\n" + message + "\n"), std::string::npos)
        << "stderr:\n" << run.err << "expected the line:\n" << message;
    if (status == kUsage) {
      EXPECT_EQ(run.out, "");
    }
  }
  ScratchDir dir_;
};

// ---------------------------------------------------------------------------------------------
// Subcommands

TEST_F(CudakitCli, AMissingOrUnknownSubcommandListsTheSubcommands) {
  const std::string all = "alloc-replay, demo, info, jit, memviz, rng, top, trace, tune";
  expect_error({}, kUsage, "cudakit: missing subcommand; the subcommands are " + all);
  expect_error({"frobnicate"}, kUsage,
               "cudakit: unknown subcommand 'frobnicate'; the subcommands are " + all);
  expect_error({"--frobnicate"}, kUsage,
               "cudakit: unknown option '--frobnicate'; the subcommands are " + all);
  expect_error({"trace"}, kUsage, "cudakit trace: missing subcommand; the subcommands are merge");
  expect_error({"trace", "split"}, kUsage,
               "cudakit trace: unknown subcommand 'split'; the subcommands are merge");
  // Where to look next, after the line that says what is wrong.
  EXPECT_NE(cudakit({"trace"}).err.find("Run 'cudakit trace --help' for its usage."),
            std::string::npos);
}

TEST_F(CudakitCli, UnknownOptionsAndExtraArgumentsAreNamed) {
  expect_error({"rng", "--count", "4"}, kUsage,
               "cudakit rng: unknown option '--count'");
  expect_error({"info", "now"}, kUsage, "cudakit info: unexpected argument 'now'");
  expect_error({"rng", "4"}, kUsage, "cudakit rng: unexpected argument '4'");
}

// ---------------------------------------------------------------------------------------------
// Numbers

TEST_F(CudakitCli, CountsOutOfRangeOrNotNumbersSayTheRange) {
  for (const char* bad : {"-1", "0", "99999999999999999999", "268435457", "abc", "4.5", "", "0x10",
                          "+4", "4 "}) {
    expect_error({"rng", "--device", "cpu", "--n", bad}, kUsage,
                 std::string("cudakit rng: --n takes a count from 1 to 268435456, not '") + bad + "'");
  }
}

TEST_F(CudakitCli, SeedsAndOffsetsTakeUnsigned64BitIntegers) {
  const std::string range = "an integer from 0 to 18446744073709551615";
  // CLI11 alone reads "-1" as 2^64-1 for an unsigned option.
  expect_error({"rng", "--seed", "-1"}, kUsage, "cudakit rng: --seed takes " + range + ", not '-1'");
  expect_error({"rng", "--seed", "18446744073709551616"}, kUsage,
               "cudakit rng: --seed takes " + range + ", not '18446744073709551616'");
  expect_error({"rng", "--offset", "ten"}, kUsage,
               "cudakit rng: --offset takes " + range + ", not 'ten'");
}

TEST_F(CudakitCli, AnOptionWithoutItsValueOrGivenTwiceSaysSo) {
  expect_error({"rng", "--n"}, kUsage, "cudakit rng: --n needs a value (INT:[1, 268435456])");
  expect_error({"rng", "--n", "4", "--n", "5"}, kUsage, "cudakit rng: --n is given 2 times; give it once");
}

TEST_F(CudakitCli, HostCapacityTakesAPositiveSizeInGib) {
  for (const char* bad : {"0", "-3", "nan", "inf", "lots", "16385", "1048576"}) {
    expect_error({"alloc-replay", "replay.csv", "--backend", "host", "--host-capacity-gib", bad},
                 kUsage,
                 std::string("cudakit alloc-replay: --host-capacity-gib takes a size in GiB from "
                             "0.01 to 16384, not '") +
                     bad + "'");
  }
}

// ---------------------------------------------------------------------------------------------
// Choices

TEST_F(CudakitCli, ChoicesListTheAcceptedValues) {
  expect_error({"rng", "--dist", "gauss"}, kUsage,
               "cudakit rng: --dist takes one of uniform, normal, exponential, not 'gauss'");
  expect_error({"rng", "--dtype", "float16"}, kUsage,
               "cudakit rng: --dtype takes one of float32, float64, not 'float16'");
  expect_error({"rng", "--device", "gpu"}, kUsage,
               "cudakit rng: --device takes one of cpu, cuda, not 'gpu'");
  expect_error({"alloc-replay", "replay.csv", "--backend", "cpu"}, kUsage,
               "cudakit alloc-replay: --backend takes one of device, host, not 'cpu'");
}

TEST_F(CudakitCli, AllocatorOptionsAreCheckedAsTheCommandLineIsRead) {
  const CliRun run = cudakit({"alloc-replay", "replay.csv", "--backend", "host", "--conf", "bogus:1"});
  EXPECT_EQ(run.status, kUsage);
  EXPECT_NE(run.err.find("cudakit alloc-replay: --conf takes allocator options in "
                         "CUDAKIT_ALLOC_CONF syntax (key:value,...), not 'bogus:1': "),
            std::string::npos)
      << run.err;
  EXPECT_NE(run.err.find("bogus"), run.err.rfind("bogus")) << "the reason names the key: " << run.err;
  EXPECT_EQ(run.err.find(".cpp:"), std::string::npos) << "no source line: " << run.err;
}

// ---------------------------------------------------------------------------------------------
// Files

TEST_F(CudakitCli, MissingOrUnreadableInputsNameThePathAndTheReason) {
  expect_error({"alloc-replay"}, kUsage,
               "cudakit alloc-replay: missing TRACE (trace file (.csv or .csv.gz), or a snapshot of "
               "torch.cuda.memory._dump_snapshot (pickle) or its JSON form)");
  expect_error({"alloc-replay", "nope.csv", "--backend", "host"}, kUsage,
               "cudakit alloc-replay: TRACE 'nope.csv' cannot be read: No such file or directory");
  expect_error({"memviz", "."}, kUsage, "cudakit memviz: SNAPSHOT '.' is a folder, not a file");
  expect_error({"trace", "merge", profiler_fixture("replay_trace.json")}, kUsage,
               "cudakit trace merge: missing ANNOTATIONS (annotations JSON: {\"<node id>\": "
               "[{...}, ...], ...})");
  expect_error({"trace", "merge", "nope.json", profiler_fixture("replay_annotations.json")}, kUsage,
               "cudakit trace merge: TRACE 'nope.json' cannot be read: No such file or directory");
  if (::geteuid() != 0) {  // root reads any file
    write_file(dir_.path() / "locked.json", "{}");
    fs::permissions(dir_.path() / "locked.json", fs::perms::none);
    expect_error({"memviz", "locked.json"}, kUsage,
                 "cudakit memviz: SNAPSHOT 'locked.json' cannot be read: Permission denied");
  }
}

TEST_F(CudakitCli, OutputsThatCannotBeWrittenAreRefusedBeforeAnyWork) {
  const std::string snapshot = memory_fixture("snapshot_small.json");
  expect_error({"memviz", snapshot, "-o", "no/such/x.html"}, kUsage,
               "cudakit memviz: --output 'no/such/x.html' cannot be written: folder 'no/such': No "
               "such file or directory");
  expect_error({"memviz", snapshot, "-o", "."}, kUsage,
               "cudakit memviz: --output '.' is a folder, not a file");
  write_file(dir_.path() / "file", "");
  expect_error({"demo", "-o", "file"}, kUsage, "cudakit demo: --out takes a folder, not the file 'file'");
}

TEST_F(CudakitCli, AnOutputThatIsAnInputIsRefusedAndTheInputKept) {
  const std::string trace = (dir_.path() / "trace.json").string();
  write_file(trace, read_file(profiler_fixture("replay_trace.json")));
  const std::string before = read_file(trace);
  expect_error({"trace", "merge", trace, profiler_fixture("replay_annotations.json"), "-o",
                "./trace.json"},
               kUsage,
               "cudakit trace merge: --output './trace.json' is TRACE '" + trace +
                   "' itself; writing it would replace the input, so name another file");
  EXPECT_EQ(read_file(trace), before);

  write_file(dir_.path() / "snap.json", read_file(memory_fixture("snapshot_small.json")));
  expect_error({"memviz", "snap.json", "-o", "snap.json"}, kUsage,
               "cudakit memviz: --output 'snap.json' is SNAPSHOT 'snap.json' itself; writing it "
               "would replace the input, so name another file");
}

TEST_F(CudakitCli, HostCapacityWithTheDeviceBackendIsAConflict) {
  expect_error({"alloc-replay", "replay.csv", "--host-capacity-gib", "8"}, kUsage,
               "cudakit alloc-replay: --host-capacity-gib sizes the simulated memory of --backend "
               "host; with --backend device it would be ignored");
}

// ---------------------------------------------------------------------------------------------
// Failures while running

TEST_F(CudakitCli, MalformedInputsFailWithoutLeavingOrDamagingAnOutput) {
  write_file(dir_.path() / "bad_trace.json", R"({"traceEvents": [1]})");
  write_file(dir_.path() / "merged.json", "earlier output");
  write_file(dir_.path() / "bad_snapshot.json",
             R"({"segments": [{"address": 0, "total_size": "x"}], "device_traces": []})");
  write_file(dir_.path() / "bad.csv", "a,1,not-a-size,s0\n");
  const std::set<std::string> before = files_in(dir_.path());

  expect_error({"trace", "merge", "bad_trace.json", profiler_fixture("replay_annotations.json"),
                "-o", "merged.json"},
               kFailure,
               "cudakit trace merge: merge_trace_annotations: invalid argument: bad_trace.json: "
               "traceEvents[0] is a number, expected an object");
  EXPECT_EQ(read_file(dir_.path() / "merged.json"), "earlier output");

  const CliRun memviz = cudakit({"memviz", "bad_snapshot.json", "-o", "memory.html"});
  EXPECT_EQ(memviz.status, kFailure);
  EXPECT_EQ(memviz.err.rfind("cudakit memviz: bad_snapshot.json: ", 0), 0u) << memviz.err;
  EXPECT_NE(memviz.err.find("segments[0].total_size"), std::string::npos) << memviz.err;

  const CliRun replay = cudakit({"alloc-replay", "bad.csv", "--backend", "host"});
  EXPECT_EQ(replay.status, kFailure);
  EXPECT_NE(replay.err.find("cudakit alloc-replay: parse_alloc_trace: invalid argument: bad.csv:1: "
                            "size is not a non-negative integer"),
            std::string::npos)
      << replay.err;

  EXPECT_EQ(files_in(dir_.path()), before) << "an output or a partial file was left";
}

TEST_F(CudakitCli, TheGpuPathsSayWhenThereIsNoDevice) {
  if (cudakit::is_available()) GTEST_SKIP() << "this machine has a CUDA device";
  expect_error({"rng", "--device", "cuda"}, kFailure,
               "cudakit rng: --device cuda needs a CUDA device and this machine has none; --device "
               "cpu draws the same values");
  expect_error({"alloc-replay", "replay.csv"}, kFailure,
               "cudakit alloc-replay: no CUDA device; use --backend host to replay on simulated "
               "memory");
}

// ---------------------------------------------------------------------------------------------
// Good paths

TEST_F(CudakitCli, GoodCommandLinesStillRun) {
  const CliRun rng = cudakit({"rng", "--seed", "1", "--offset", "0", "--n", "4", "--dist", "normal",
                              "--dtype", "float32", "--device", "cpu"});
  EXPECT_EQ(rng.status, 0) << rng.err;
  EXPECT_EQ(std::count(rng.out.begin(), rng.out.end(), '\n'), 4) << rng.out;
  EXPECT_EQ(rng.err, "");

  // Decimal, whatever the leading zeros: CLI11 alone reads 010 as octal 8.
  const CliRun ten = cudakit({"rng", "--device", "cpu", "--n", "010"});
  EXPECT_EQ(std::count(ten.out.begin(), ten.out.end(), '\n'), 10) << ten.err;

  const CliRun replay = cudakit({"alloc-replay", "replay.csv", "--backend", "host",
                                 "--host-capacity-gib", "0.5", "--json"});
  EXPECT_EQ(replay.status, 0) << replay.err;
  EXPECT_NE(replay.out.find("\"ops\":4"), std::string::npos) << replay.out;

  const CliRun merge = cudakit({"trace", "merge", profiler_fixture("replay_trace.json"),
                                profiler_fixture("replay_annotations.json"), "-o", "merged.json"});
  EXPECT_EQ(merge.status, 0) << merge.err;
  const CliRun memviz = cudakit({"memviz", memory_fixture("snapshot_small.json")});
  EXPECT_EQ(memviz.status, 0) << memviz.err;
  // The outputs, and no temporary file beside them.
  EXPECT_EQ(files_in(dir_.path()),
            (std::set<std::string>{"replay.csv", "merged.json", "memory.html"}));
}

TEST_F(CudakitCli, HelpAndVersionExitWithZero) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"--help"}, {"info", "--help"}, {"demo", "--help"},
                                             {"trace", "--help"}, {"trace", "merge", "--help"},
                                             {"alloc-replay", "--help"}, {"rng", "--help"},
                                             {"memviz", "--help"}}) {
    const std::string command = command_line(args);
    SCOPED_TRACE(command);
    const CliRun run = cudakit(args);
    EXPECT_EQ(run.status, 0) << run.err;
    // The usage line names the subcommands given ("Usage: cudakit trace merge [OPTIONS] ...").
    const std::string usage = "Usage: " + command.substr(0, command.rfind(" --help"));
    EXPECT_NE(run.out.find(usage + " "), std::string::npos) << run.out;
    EXPECT_EQ(run.err, "");
  }
  const CliRun rng_help = cudakit({"rng", "--help"});
  EXPECT_NE(rng_help.out.find("[1, 268435456]"), std::string::npos) << rng_help.out;
  EXPECT_NE(rng_help.out.find("{uniform,normal,exponential}"), std::string::npos) << rng_help.out;
  const CliRun version = cudakit({"--version"});
  EXPECT_EQ(version.status, 0);
  EXPECT_NE(version.out, "");
}

}  // namespace
