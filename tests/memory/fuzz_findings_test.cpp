// Inputs the fuzz targets (fuzz/) found to break the memory layer's readers, each of which must
// now be refused with an InvalidArgumentError that says what is wrong.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cudakit/core/error.hpp"
#include "cudakit/memory/alloc_trace.hpp"

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

}  // namespace
}  // namespace cudakit::memory
