// Host tier: a PyTorch snapshot's trace as the what-if replays read it (Note [Replaying a
// snapshot's trace]): the pickle in every protocol and the JSON form alike, blocks live before the
// trace, frees that record_stream deferred, empty_cache() calls, the recorded peak, bad input.

#include "cudakit/memory/snapshot_trace.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "cudakit/core/error.hpp"
#include "support/paths.hpp"

namespace cudakit::memory {
namespace {

constexpr std::uint64_t MiB = std::uint64_t{1} << 20;
using K = SnapshotOp::Kind;

std::string fixture_path(const std::string& name) { return cudakit::testing::test_data_dir() + "/memory/" + name; }
std::string fixture(const std::string& name) {
  std::ifstream in(fixture_path(name), std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::string refusal(const std::string& bytes, std::optional<int> device = {}) {
  try {
    (void)parse_snapshot_trace(bytes, "snap", device);
  } catch (const InvalidArgumentError& e) {
    return e.what();
  }
  return "";
}

void expect_refusal(const std::string& bytes, const std::string& part, std::optional<int> device = {}) {
  const std::string message = refusal(bytes, device);
  EXPECT_NE(message.find(part), std::string::npos) << "message: " << message << "\nexpected: " << part;
}

// A JSON snapshot of one device whose trace is `entries` (a JSON list's items).
std::string json_snapshot(const std::string& entries, const std::string& segments = "",
                          const std::string& settings = "{}") {
  return "{\"segments\": [" + segments + "], \"allocator_settings\": " + settings + ", \"device_traces\": [[" +
         entries + "]]}";
}
std::string entry(const char* action, std::uint64_t addr, std::uint64_t size, std::uint64_t stream = 7) {
  return "{\"action\": \"" + std::string(action) + "\", \"addr\": " + std::to_string(addr) + ", \"size\": " +
         std::to_string(size) + ", \"stream\": " + std::to_string(stream) + "}";
}

TEST(SnapshotTrace, ReadsTheSameTraceFromEveryProtocolAndFromJson) {
  const SnapshotTrace base = parse_snapshot_trace(fixture("whatif_small.pickle"), "p4");
  EXPECT_EQ(base.format, "pickle");
  ASSERT_EQ(base.devices.size(), 1u);
  const SnapshotDeviceTrace& d = base.devices[0];
  EXPECT_EQ(d.trace_entries, 20u);
  EXPECT_EQ(d.allocs, 5u);
  EXPECT_EQ(d.frees, 5u);
  EXPECT_EQ(d.streams, (std::vector<std::int64_t>{0x5a00, 0x5b00}));
  const std::vector<std::pair<K, std::uint64_t>> expected = {
      {K::alloc, 4 * MiB}, {K::alloc, 3 * MiB},  // the blocks live before the trace
      {K::alloc, 2 * MiB}, {K::free, 4 * MiB}, {K::alloc, 4096}, {K::alloc, 6 * MiB}, {K::free, 2 * MiB},
      {K::alloc, 5 * MiB}, {K::free_completed, 2 * MiB}, {K::free, 6 * MiB}, {K::free, 5 * MiB},
      {K::empty_cache, 0}, {K::alloc, 10 * MiB}, {K::free, 4096}};
  ASSERT_EQ(d.ops.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(d.ops[i].kind, expected[i].first) << i;
    EXPECT_EQ(d.ops[i].size, expected[i].second) << i;
  }
  for (const char* name : {"whatif_small_p2.pickle", "whatif_small_p3.pickle", "whatif_small_p5.pickle",
                           "whatif_small.json"}) {
    SCOPED_TRACE(name);
    const SnapshotTrace other = parse_snapshot_trace(fixture(name), name);
    ASSERT_EQ(other.devices.size(), 1u);
    const auto& ops = other.devices[0].ops;
    ASSERT_EQ(ops.size(), d.ops.size());
    for (std::size_t i = 0; i < ops.size(); ++i) {
      EXPECT_EQ(ops[i].kind, d.ops[i].kind);
      EXPECT_EQ(ops[i].slot, d.ops[i].slot);
      EXPECT_EQ(ops[i].stream, d.ops[i].stream);
      EXPECT_EQ(ops[i].size, d.ops[i].size);
      EXPECT_EQ(ops[i].entry, d.ops[i].entry);
      EXPECT_EQ(ops[i].deferred, d.ops[i].deferred);
    }
    EXPECT_EQ(other.devices[0].recorded_peak_reserved, d.recorded_peak_reserved);
  }
  EXPECT_EQ(parse_snapshot_trace(fixture("whatif_small.json"), "j").format, "JSON");
}

TEST(SnapshotTrace, SeedsTheBlocksAllocatedBeforeTheTraceBegan) {
  const SnapshotTrace s = parse_snapshot_trace(fixture("whatif_small.pickle"), "snap");
  const SnapshotDeviceTrace& d = s.devices[0];
  EXPECT_EQ(d.seeded_blocks, 2u);
  EXPECT_EQ(d.seeded_bytes, 7 * MiB);
  // Freed by entry 2, and still allocated in the final segments.
  EXPECT_EQ(d.ops[0].entry, SnapshotOp::kNoEntry);
  EXPECT_EQ(d.ops[1].entry, SnapshotOp::kNoEntry);
  EXPECT_EQ(d.ops[3].slot, d.ops[0].slot) << "entry 2 frees the first seed";
  ASSERT_NE(d.ops[1].frame, SnapshotOp::kNoFrame);
  EXPECT_EQ(s.frames[d.ops[1].frame].name, "load_model") << "the seed from a segment keeps its block's frames";
  // The peak of requested bytes counts them from the start: 3 MiB of the seeds, then 2 + 6 + 5 MiB
  // + 4 KiB at entry 8, after the other seed's 4 MiB and the 2 MiB were freed.
  EXPECT_EQ(d.peak_requested_bytes, 14 * MiB + 4096);
}

TEST(SnapshotTrace, TakesFreesAtFreeRequestedAndMarksTheDeferredOnes) {
  const SnapshotDeviceTrace d = parse_snapshot_trace(fixture("whatif_small.pickle"), "snap").devices[0];
  for (const SnapshotOp& op : d.ops) {
    if (op.kind != K::free) continue;
    // Entry 7's free completes at entry 9 (record_stream); every other one at once.
    EXPECT_EQ(op.deferred, op.entry == 7) << op.entry;
  }
  EXPECT_EQ(d.ops[8].kind, K::free_completed);
  EXPECT_EQ(d.ops[8].entry, 9u);
  EXPECT_EQ(d.ops[8].slot, d.ops[6].slot);
  // Without any free_completed entry (skip_actions), frees complete at once.
  const std::string no_completions =
      json_snapshot(entry("alloc", 4096, 512) + "," + entry("free_requested", 4096, 512));
  EXPECT_FALSE(parse_snapshot_trace(no_completions, "s").devices[0].ops[1].deferred);
}

TEST(SnapshotTrace, ReadsTheFramePeopleLookFor) {
  const SnapshotTrace s = parse_snapshot_trace(fixture("whatif_small.pickle"), "snap");
  const SnapshotOp& op = s.devices[0].ops[5];  // entry 6
  ASSERT_NE(op.frame, SnapshotOp::kNoFrame);
  const StackFrame& f = s.frames[op.frame];
  EXPECT_EQ(f.filename, "/home/user/train.py") << "the innermost frame outside torch's own files";
  EXPECT_EQ(f.line, 14);
  EXPECT_EQ(f.name, "step");
}

TEST(SnapshotTrace, TakesSegmentReleasesForEmptyCacheUnlessMemoryOrCollectionExplainsThem) {
  const auto count = [](const std::string& json) { return parse_snapshot_trace(json, "s").devices[0].empty_cache_calls; };
  const std::string alloc = entry("alloc", 1 << 30, 4 * MiB), release = entry("segment_free", 1 << 30, 20 * MiB),
                    grow = entry("segment_alloc", 2u << 30, 20 * MiB), oom = entry("oom", 0, 30 * MiB);
  EXPECT_EQ(count(json_snapshot(alloc + "," + release + "," + entry("free_requested", 1 << 30, 4 * MiB))), 1u);
  EXPECT_EQ(count(json_snapshot(alloc + "," + release + "," + grow + "," + entry("alloc", 2u << 30, 4 * MiB))), 1u)
      << "a cache miss after empty_cache obtains a segment too";
  EXPECT_EQ(count(json_snapshot(alloc + "," + release + "," + oom)), 0u) << "released while running out of memory";
  EXPECT_EQ(count(json_snapshot(alloc + "," + release + "," + grow + "," + entry("alloc", 2u << 30, 4 * MiB), "",
                                "{\"garbage_collection_threshold\": 0.6}")),
            0u)
      << "with a threshold, releases just before a new segment are garbage collection";
  EXPECT_EQ(count(json_snapshot(alloc + "," + release)), 1u) << "at the end of the trace";
}

TEST(SnapshotTrace, CountsTheRecordedReservedPeakBackFromTheFinalSegments) {
  const SnapshotDeviceTrace d = parse_snapshot_trace(fixture("whatif_small.pickle"), "snap").devices[0];
  // Final segments 20 + 2 + 10 MiB; the trace's events add 2 + 20 - 20 + 10 MiB: 20 MiB at its
  // start, 42 MiB at most.
  EXPECT_EQ(d.recorded_final_reserved, 32 * MiB);
  EXPECT_EQ(d.recorded_peak_reserved, 42 * MiB);
  // Events that do not add up (a trace that lost entries) give no recorded peak.
  const std::string lost = json_snapshot(entry("segment_alloc", 1 << 30, 20 * MiB) + "," + entry("alloc", 1 << 30, 512));
  EXPECT_FALSE(parse_snapshot_trace(lost, "s").devices[0].recorded_peak_reserved.has_value());
}

TEST(SnapshotTrace, ReadsTheRecordedSettings) {
  const SnapshotTrace s = parse_snapshot_trace(fixture("whatif_small.pickle"), "snap");
  EXPECT_EQ(s.settings.max_split_size, 64 * MiB);
  EXPECT_FALSE(s.settings.expandable_segments);
  EXPECT_EQ(s.ignored_settings, (std::vector<std::string>{"release_lock_on_cudamalloc:True"}));
  EXPECT_EQ(s.settings_text, "PYTORCH_CUDA_ALLOC_CONF='max_split_size_mb:64,release_lock_on_cudamalloc:True'");
  const std::string json = json_snapshot(entry("alloc", 4096, 512), "",
                                         "{\"PYTORCH_CUDA_ALLOC_CONF\": \"expandable_segments:True\", "
                                         "\"max_split_size\": -1, \"roundup_power2_divisions\": {\"1\": 4, \"4\": 8}}");
  const SnapshotTrace t = parse_snapshot_trace(json, "s");
  EXPECT_TRUE(t.settings.expandable_segments);
  EXPECT_EQ(t.settings.max_split_size, ~std::size_t{0}) << "torch writes an unlimited max_split_size as -1";
  EXPECT_EQ(t.settings.roundup_power2_divisions[0], 4u);
  EXPECT_EQ(t.settings.roundup_power2_divisions[2], 8u);
}

TEST(SnapshotTrace, RefusesWhatIsNotASnapshotWithTraceEntries) {
  expect_refusal(fixture("whatif_not_snapshot.pickle"),
                 "snap: no \"device_traces\" key: not a memory snapshot (torch.cuda.memory._dump_snapshot writes");
  expect_refusal("\x80\x04]\x94.", "snap: it holds a list, not a memory snapshot");
  expect_refusal(fixture("whatif_no_trace.pickle"),
                 "snap: the snapshot has no trace entries: record them with "
                 "torch.cuda.memory._record_memory_history(max_entries=1000000) before the code to replay (its "
                 "default context=\"all\" records every allocation, free and segment event)");
  expect_refusal(json_snapshot(entry("segment_alloc", 1 << 30, 20 * MiB)), "has 1 entries but no alloc or free_requested");
  const std::string small = fixture("whatif_small.pickle");
  expect_refusal(small.substr(0, small.size() / 2), "snap: pickle opcode");
  expect_refusal(small.substr(0, small.size() / 2), "the file is truncated");
  expect_refusal("{\"segments\": [", "snap: not valid JSON");
  expect_refusal("op,id,size,stream\n", "snap: neither a pickle (torch.cuda.memory._dump_snapshot writes one");
  expect_refusal("", "snap: the file is empty");
  expect_refusal(small, "snap: device 1 has no trace entries (devices with entries: 0)", 1);
}

TEST(SnapshotTrace, RefusesMalformedEntriesByTheirPath) {
  expect_refusal(json_snapshot(entry("alloc", 4096, std::uint64_t{1} << 60)),
                 "snap: device_traces[0][0].size is 1152921504606846976 bytes: larger than any device");
  expect_refusal(json_snapshot("{\"action\": \"alloc\", \"addr\": 4096, \"size\": 18446744073709551615}"),
                 "device_traces[0][0].size is beyond 64 bits");
  expect_refusal(json_snapshot("{\"action\": \"alloc\", \"addr\": 4096, \"size\": \"big\"}"),
                 "device_traces[0][0].size is a str, expected an int");
  expect_refusal(json_snapshot("{\"action\": \"alloc\", \"size\": 4}"), "device_traces[0][0] has no \"addr\"");
  expect_refusal(json_snapshot("{\"addr\": 4}"), "device_traces[0][0] has no \"action\"");
  expect_refusal(json_snapshot(entry("alloc", 4096, 512) + "," + entry("alloc", 4096, 512)),
                 "device_traces[0][1] allocates address 4096 again while it is allocated: the trace lacks its "
                 "free_requested entry");
  std::string deep;
  for (int i = 0; i < 2000; ++i) deep += "{\"a\": ";
  expect_refusal(deep + "0" + std::string(2000, '}'), "JSON nested deeper than 1000 levels");
}

TEST(SnapshotTrace, TellsSnapshotsFromCsvTracesByTheirFirstBytes) {
  EXPECT_TRUE(looks_like_snapshot(fixture_path("whatif_small.pickle")));
  EXPECT_TRUE(looks_like_snapshot(fixture_path("whatif_small.json")));
  EXPECT_TRUE(looks_like_snapshot(fixture_path("whatif_small.pickle.gz")));
  EXPECT_FALSE(looks_like_snapshot(cudakit::testing::test_data_dir() + "/alloc-traces/trace_gpt_train.csv.gz"));
  EXPECT_FALSE(looks_like_snapshot(fixture_path("missing.pickle")));
  EXPECT_EQ(load_snapshot_trace(fixture_path("whatif_small.pickle.gz")).devices[0].ops.size(), 14u)
      << "read through gzip";
}

}  // namespace
}  // namespace cudakit::memory
