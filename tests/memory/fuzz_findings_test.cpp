// Inputs the fuzz targets (fuzz/) found to break the memory layer's readers, each of which must
// now be refused with an InvalidArgumentError that says what is wrong.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cudakit/core/error.hpp"
#include "cudakit/memory/alloc_trace.hpp"
#include "cudakit/memory/allocator_config.hpp"
#include "cudakit/memory/memviz.hpp"

namespace cudakit::memory {
namespace {

// Checks that read() throws InvalidArgumentError whose message contains `part`.
template <class Read>
void expect_refused(Read read, const std::string& part) {
  try {
    read();
    FAIL() << "accepted; expected an error containing: " << part;
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos)
        << "message: " << e.what() << "\nexpected to contain: " << part;
  }
}

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
  // zlib's message names the path again: "cannot read 'P': P: incorrect data check".
  expect_refused([&] { (void)load_alloc_trace(path.string()); }, "cannot read '" + path.string());
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
                 "snapshot is not valid JSON: [json.exception.out_of_range.406] number overflow "
                 "parsing '2e097152'");
}

}  // namespace
}  // namespace cudakit::memory
