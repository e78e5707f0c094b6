// GPU tier of the kernel cache: an entry intact to its checksum that the driver does not load
// (CUDA_ERROR_INVALID_IMAGE: a cubin damaged before it was written, or by a tool that rewrote the
// entry with a fresh checksum) is compiled again and replaced, not a failed call.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <vector>

#include "cudakit/core/device.hpp"
#include "cudakit/core/log.hpp"
#include "cudakit/jiterator/detail/cache_entry.hpp"
#include "jiterator/detail/kernel_store.hpp"
#include "support/gpu_test.hpp"
#include "support/scratch_dir.hpp"
#include "support/test_files.hpp"

namespace cudakit::jiterator::detail {
namespace {

namespace fs = std::filesystem;
using cudakit::testing::read_file;
using cudakit::testing::ScratchDir;
using cudakit::testing::write_file;

const std::string kSource =
    "extern \"C\" __global__ void k(float* o, const float* a, unsigned n) {\n"
    "  unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) o[i] = 2.0f * a[i]; }\n";

TEST(KernelCacheGpu, AnEntryTheDriverCannotLoadIsCompiledAgainAndReplaced) {
  CUDAKIT_REQUIRE_GPU();
  const DeviceProperties p = get_device_properties(0);
  const int arch = p.major * 10 + p.minor;
  const ScratchDir dir;
  {
    KernelStore writer([&] { return std::optional(dir.path()); });
    ASSERT_NE(writer.function(kSource, arch, 0, "k"), nullptr);
  }
  fs::path entry;
  for (const auto& e : fs::directory_iterator(dir.path())) {
    if (e.path().extension() == ".cubin") entry = e.path();
  }
  ASSERT_FALSE(entry.empty());
  const std::string good = read_file(entry);
  std::string why;
  const auto decoded = decode_cache_entry(good, &why);
  ASSERT_TRUE(decoded) << why;
  const std::string key(decoded->key);
  const std::string cubin(decoded->cubin);
  // Damage the checksum does not see: half a cubin, and an ELF header over noise. The driver would
  // read past such images (it crashed on both): refused when the entry is read, compiled again.
  for (const std::string& bad : {cubin.substr(0, cubin.size() / 2),
                                 cubin.substr(0, 16) + std::string(cubin.size() - 16, '\x5a')}) {
    write_file(entry, encode_cache_entry(key, bad));
    std::vector<std::string> warnings;
    std::mutex mutex;
    const LogSink previous = set_log_sink([&](const LogRecord& r) {
      const std::lock_guard lock(mutex);
      if (r.level == LogLevel::warning) warnings.emplace_back(r.message);
    });
    KernelStore reader([&] { return std::optional(dir.path()); });
    const CUfunction function = reader.function(kSource, arch, 0, "k");
    set_log_sink(previous);
    EXPECT_NE(function, nullptr);
    const KernelCacheStatistics stats = reader.statistics();
    EXPECT_EQ(stats.disk_hits, 0);
    EXPECT_EQ(stats.corrupt_entries, 1);
    EXPECT_EQ(stats.compiles, 1);
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find("a cubin the driver cannot load"), std::string::npos) << warnings[0];
    // Replaced by the good entry: a fresh store loads it from disk without compiling.
    EXPECT_EQ(read_file(entry), good);
    KernelStore again([&] { return std::optional(dir.path()); });
    EXPECT_NE(again.function(kSource, arch, 0, "k"), nullptr);
    EXPECT_EQ(again.statistics().compiles, 0);
  }
}

}  // namespace
}  // namespace cudakit::jiterator::detail
