// Inputs the fuzz targets (fuzz/) found to break the memory layer's readers, each of which must
// now be refused with an InvalidArgumentError that says what is wrong.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cudakit/core/error.hpp"
#include "support/expect_refused.hpp"
#include "cudakit/memory/alloc_trace.hpp"
#include "cudakit/memory/allocator_config.hpp"
#include "cudakit/memory/viewer/memviz.hpp"
#include "cudakit/memory/snapshot.hpp"

namespace cudakit::memory {
namespace {

using cudakit::testing::expect_refused;

// The message of a gzip read error used to be read after gzclose had freed it.
TEST(MemoryFuzzFindings, CorruptGzipTraceNamesZlibsError) {
  // gzip -n of "a,1,8,0\n" with the first byte of its CRC flipped.
  const unsigned char corrupt[] = {0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03,
                                   0x4b, 0xd4, 0x31, 0xd4, 0xb1, 0xd0, 0x31, 0xe0, 0x02, 0x00,
                                   0x71, 0x8a, 0x32, 0x81, 0x08, 0x00, 0x00, 0x00};
  const auto path = std::filesystem::temp_directory_path() /
                    ("cudakit_corrupt_trace_" + std::to_string(::getpid()) + ".csv.gz");
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(corrupt), sizeof corrupt);
  expect_refused([&] { (void)load_alloc_trace(path.string()); }, path.string() + ": cannot read: ");
  expect_refused([&] { (void)load_alloc_trace(path.string()); }, "incorrect data check");
  std::filesystem::remove(path);
}

// Numbers outside what their key's integer holds, and inf and nan (which from_chars reads), used
// to reach a float-to-integer cast, undefined past the integer's range.
TEST(MemoryFuzzFindings, AllocatorConfigNumbersBeyondTheirIntegersAreRefused) {
  const auto refused = [](const std::string& text, const std::string& part) {
    expect_refused([&] { (void)AllocatorConfig::parse(text); }, part);
  };
  // The input the fuzzer found: an interval bound of 1.02e86 MiB.
  const std::string huge = "1024" + std::string(83, '9');
  refused("roundup_power2_divisions:[512:1,256:2," + huge + ":4,>:8]",
          "interval '" + huge + "' must be a power of two (MiB)");
  refused("roundup_power2_divisions:[-256:1,>:2]", "interval '-256' must be a power of two (MiB)");
  refused("max_split_size_mb:1e300", "'max_split_size_mb:1e300': too large");
  refused("max_split_size_mb:17592186044416", "too large");  // 2^64 bytes
  refused("max_non_split_rounding_mb:inf", "'max_non_split_rounding_mb:inf': not a finite number");
  refused("max_split_size_mb:nan", "'max_split_size_mb:nan': not a finite number");
  refused("garbage_collection_threshold:nan", "not a finite number");
  // The largest sizes still fit, and a bound past the last interval names the last one.
  EXPECT_EQ(AllocatorConfig::parse("max_split_size_mb:17592186044415").max_split_size,
            std::size_t{17592186044415} << 20);
  EXPECT_EQ(AllocatorConfig::parse("roundup_power2_divisions:[1048576:8]")
                .roundup_power2_divisions[AllocatorConfig::kRoundupIntervals - 1],
            8u);
}

// A number too large for a double is nlohmann's out_of_range, not its parse_error, and escaped.
TEST(MemoryFuzzFindings, MemvizRefusesNumbersNoDoubleHolds) {
  expect_refused([] { (void)render_memviz_html(R"({"segments": [{"total_size": 2e097152}]})"); },
                 "snapshot: not valid JSON: number overflow parsing '2e097152'");
}

// Values of the wrong kind escaped as nlohmann's type_error (value() with a default of another
// type, operator[] on a non-list), and a float read as an integer was an undefined cast.
TEST(MemoryFuzzFindings, SnapshotValuesOfTheWrongKindAreRefusedByPath) {
  const auto refused = [](const std::string& segment, const std::string& part) {
    const std::string text = R"({"segments": [)" + segment + R"(], "device_traces": [[]]})";
    expect_refused([&] { (void)snapshot_from_json(text); }, part);
  };
  const std::string ok_block = R"({"address": 8192, "size": 1024, "state": "inactive"})";
  const auto segment = [&](const std::string& extra, const std::string& blocks) {
    return R"({"device": 0, "address": 8192, "total_size": 2097152, )" + extra +
           R"("blocks": )" + blocks + "}";
  };
  // The input the fuzzer found, reduced: a size given as a string.
  refused(segment(R"("requested_size": "larg;e", )", "[]"),
          "segments[0].requested_size is string, expected an unsigned 64-bit integer");
  refused(segment(R"("stream": -1, )", "[]"),
          "segments[0].stream is -1, expected an unsigned 64-bit integer");
  refused(segment(R"("segment_pool_id": [1, 2.5], )", "[]"),
          "segments[0].segment_pool_id[1] is 2.5, expected an unsigned 64-bit integer");
  refused(segment(R"("is_expandable": 1, )", "[]"),
          "segments[0].is_expandable is number, expected a boolean");
  refused(segment("", "3"), "segments[0].blocks is number, expected a list");
  refused(segment("", "[7]"), "segments[0].blocks[0] is number, expected an object");
  const auto block_with_frames = [](const std::string& frames) {
    return R"([{"address": 8192, "size": 1024, "state": "inactive", "frames": )" + frames + "}]";
  };
  refused(segment("", block_with_frames("[3]")),
          "segments[0].blocks[0].frames[0] is number, expected an object");
  refused(segment("", block_with_frames(R"([{"line": "x"}])")),
          "segments[0].blocks[0].frames[0].line is string, expected a signed 32-bit integer");
  refused(R"("segment")", "segments[0] is string, expected an object");
  expect_refused([] { (void)snapshot_from_json(R"({"device": 1e300, "segments": []})"); },
                 "snapshot.device is 1e+300, expected a signed 32-bit integer");
  expect_refused([] { (void)snapshot_from_json(R"({"segments": [], "device_traces": [{}]})"); },
                 "device_traces[0] is object, expected a list");
  expect_refused(
      [] {
        (void)snapshot_from_json(
            R"({"segments": [], "device_traces": [[{"action": "alloc", "time_us": 1e30}]]})");
      },
      "device_traces[0][0].time_us is 1e+30, expected a signed 64-bit integer");
  // What snapshot_to_json writes still reads back.
  const std::string good =
      R"({"device": 0, "segments": [)" +
      segment(R"("segment_pool_id": [1, 2], "is_expandable": true, )", "[" + ok_block + "]") +
      R"(], "device_traces": [[{"action": "alloc", "addr": 8192, "size": 1024, "stream": 7, )"
      R"("time_us": 5, "frames": [{"name": "f", "filename": "a.cpp", "line": 3}]}]]})";
  const MemorySnapshot back = snapshot_from_json(good);
  ASSERT_EQ(back.segments.size(), 1u);
  EXPECT_EQ(back.segments[0].pool, (PoolId{1, 2}));
  EXPECT_TRUE(back.segments[0].is_expandable);
  ASSERT_EQ(back.trace.size(), 1u);
  EXPECT_EQ(back.trace[0].time_us, 5);
  ASSERT_TRUE(back.trace[0].frames);
  EXPECT_EQ(back.trace[0].frames->at(0).line, 3);
}

}  // namespace
}  // namespace cudakit::memory
