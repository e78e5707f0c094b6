// Host tier: the jiterator's kernel cache — entries' format, hits in memory and on disk, damaged
// entries, an unwritable folder, and one compile per key across threads and processes. NVRTC
// compiles for sm_90 without a GPU; nothing here loads a module.

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>
#include <vector>

#include "cudakit/core/error.hpp"
#include "cudakit/core/log.hpp"
#include "cudakit/jiterator/kernel_cache.hpp"
#include "cudakit/jiterator/detail/cache_entry.hpp"
#include "cudakit/jiterator/nvrtc_error.hpp"
#include "jiterator/detail/kernel_store.hpp"
#include "support/child_process.hpp"
#include "support/scoped_env.hpp"
#include "support/scratch_dir.hpp"

namespace cudakit::jiterator::detail {
namespace {

namespace fs = std::filesystem;
using cudakit::testing::ScopedEnv;
using cudakit::testing::ScratchDir;

const std::string kSource =
    "extern \"C\" __global__ void k(float* o, const float* a, unsigned n) {\n"
    "  unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) o[i] = 2.0f * a[i]; }\n";

// The cache's files in `dir` with `suffix`.
std::vector<fs::path> files(const fs::path& dir, const std::string& suffix) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().string().ends_with(suffix)) out.push_back(e.path());
  }
  return out;
}

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}
void write_all(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << bytes;
}

// Collects warnings for the test's life.
class WarningLog {
 public:
  WarningLog() {
    previous_ = set_log_sink([this](const LogRecord& r) {
      if (r.level != LogLevel::warning) return;
      const std::lock_guard lock(mutex_);
      messages_.emplace_back(r.message);
    });
  }
  ~WarningLog() { set_log_sink(previous_); }
  std::vector<std::string> messages() {
    const std::lock_guard lock(mutex_);
    return messages_;
  }

 private:
  LogSink previous_;
  std::mutex mutex_;
  std::vector<std::string> messages_;
};

// The 64-byte header of a little-endian ELF64 file with no sections, fields set by `set`.
std::string elf_header() {
  std::string e(64, '\0');
  e.replace(0, 7, "\x7f" "ELF\x02\x01\x01");
  return e;
}
void set_field(std::string& e, std::size_t offset, std::uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) e[offset + i] = static_cast<char>((value >> (8 * i)) & 0xff);
}

TEST(KernelCacheEntry, RoundTripsAndRefusesDamage) {
  const std::string bytes = encode_cache_entry("the key", elf_header());
  std::string why;
  const auto entry = decode_cache_entry(bytes, &why);
  ASSERT_TRUE(entry) << why;
  EXPECT_EQ(entry->key, "the key");
  EXPECT_EQ(entry->cubin, elf_header());

  EXPECT_FALSE(decode_cache_entry(bytes.substr(0, bytes.size() - 1), &why));
  EXPECT_NE(why.find("sizes disagree with the length"), std::string::npos) << why;
  EXPECT_FALSE(decode_cache_entry(bytes.substr(0, 10), &why));
  EXPECT_NE(why.find("truncated: 10 bytes"), std::string::npos) << why;
  std::string flipped = bytes;
  flipped.back() ^= 1;
  EXPECT_FALSE(decode_cache_entry(flipped, &why));
  EXPECT_NE(why.find("checksum mismatch"), std::string::npos) << why;
  std::string magic = bytes;
  magic[0] = 'X';
  EXPECT_FALSE(decode_cache_entry(magic, &why));
  EXPECT_NE(why.find("wrong magic"), std::string::npos) << why;
  std::string version = bytes;
  version[8] = 9;
  EXPECT_FALSE(decode_cache_entry(version, &why));
  EXPECT_NE(why.find("format version 9, expected " + std::to_string(kCacheEntryVersion)), std::string::npos) << why;
}

// cuModuleLoadData takes no size: an image whose headers or sections point past its bytes is
// refused before the driver reads past them, as is one that is no ELF64 file at all.
TEST(KernelCacheEntry, RefusesCubinsTheDriverWouldReadPast) {
  std::string why;
  const auto refused = [&](const std::string& cubin, const char* reason) {
    EXPECT_FALSE(decode_cache_entry(encode_cache_entry("k", cubin), &why)) << reason;
    EXPECT_NE(why.find(reason), std::string::npos) << why;
  };
  refused("not an elf file at all, but its checksum is right", "not a little-endian ELF64 file");
  std::string truncated = elf_header();  // three section headers promised, none present
  set_field(truncated, 0x28, 64, 8);
  set_field(truncated, 0x3a, 64, 2);
  set_field(truncated, 0x3c, 3, 2);
  refused(truncated, "section headers lie past its 64 bytes");
  std::string noise = elf_header() + std::string(200, '\x5a');  // an ELF header over noise
  noise.replace(16, 48, std::string(48, '\x5a'));
  refused(noise, "lie past");
  std::string section = elf_header() + std::string(64, '\0');  // one section, its bytes past the end
  set_field(section, 0x28, 64, 8);
  set_field(section, 0x3a, 64, 2);
  set_field(section, 0x3c, 1, 2);
  set_field(section, 64 + 4, 1, 4);          // SHT_PROGBITS
  set_field(section, 64 + 0x18, 100, 8);     // sh_offset
  set_field(section, 64 + 0x20, 1000, 8);    // sh_size
  refused(section, "section 0 lies past its 128 bytes");
  set_field(section, 64 + 0x20, 28, 8);      // inside: loadable as far as the bounds go
  EXPECT_TRUE(decode_cache_entry(encode_cache_entry("k", section), &why)) << why;
}

TEST(KernelCache, HitsInMemoryThenOnDiskInAFreshStore) {
  const ScratchDir dir;
  KernelStore first([&] { return std::optional(dir.path()); });
  KernelOrigin origin{};
  const auto compiled = first.get(kSource, 90, &origin);
  EXPECT_EQ(origin, KernelOrigin::compiled);
  EXPECT_GT(compiled->info().compile_ms, 0.0);
  EXPECT_EQ(first.get(kSource, 90, &origin), compiled);
  EXPECT_EQ(origin, KernelOrigin::memory);
  EXPECT_EQ(files(dir.path(), ".cubin").size(), 1u);
  EXPECT_TRUE(files(dir.path(), ".tmp").empty());

  // Another architecture is another key.
  (void)first.get(kSource, 80, &origin);
  EXPECT_EQ(origin, KernelOrigin::compiled);
  EXPECT_EQ(files(dir.path(), ".cubin").size(), 2u);

  KernelStore second([&] { return std::optional(dir.path()); });
  const auto loaded = second.get(kSource, 90, &origin);
  EXPECT_EQ(origin, KernelOrigin::disk);
  EXPECT_EQ(loaded->cubin(), compiled->cubin());
  const KernelCacheStatistics stats = second.statistics();
  EXPECT_EQ(stats.disk_hits, 1);
  EXPECT_EQ(stats.compiles, 0);
  const KernelCacheStatistics firsts = first.statistics();
  EXPECT_EQ(firsts.compiles, 2);
  EXPECT_EQ(firsts.memory_hits, 1);
}

TEST(KernelCache, DamagedOrTruncatedEntriesAreRecompiledWithOneWarning) {
  const ScratchDir dir;
  {
    KernelStore writer([&] { return std::optional(dir.path()); });
    (void)writer.get(kSource, 90);
  }
  const fs::path entry = files(dir.path(), ".cubin").at(0);
  const std::string good = read_all(entry);
  for (const std::string& damaged : {good.substr(0, good.size() / 2), std::string(), [&] {
         std::string s = good;
         s[s.size() - 10] ^= 0x55;
         return s;
       }()}) {
    write_all(entry, damaged);
    WarningLog log;
    KernelStore reader([&] { return std::optional(dir.path()); });
    KernelOrigin origin{};
    const auto module = reader.get(kSource, 90, &origin);
    EXPECT_EQ(origin, KernelOrigin::compiled);
    EXPECT_EQ(reader.statistics().corrupt_entries, 1);
    const auto warnings = log.messages();
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find("ignoring the kernel-cache entry " + entry.string()), std::string::npos) << warnings[0];
    // Replaced by a good entry.
    EXPECT_EQ(read_all(entry), good);
  }
}

TEST(KernelCache, UnwritableFolderMeansMemoryOnlyAndOneWarning) {
  const ScratchDir dir;
  write_all(dir.path() / "file", "x");
  const fs::path impossible = dir.path() / "file" / "kernels";  // below a file: cannot be created
  WarningLog log;
  KernelStore store([&] { return std::optional(impossible); });
  KernelOrigin origin{};
  (void)store.get(kSource, 90, &origin);
  EXPECT_EQ(origin, KernelOrigin::compiled);
  (void)store.get(kSource, 80, &origin);
  EXPECT_EQ(origin, KernelOrigin::compiled);
  const auto warnings = log.messages();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("no disk cache for compiled kernels: cannot create " + impossible.string()), std::string::npos)
      << warnings[0];
}

TEST(KernelCache, ReadOnlyFolderIsReadButNotWritten) {
  if (::geteuid() == 0) GTEST_SKIP() << "root writes to read-only folders";
  const ScratchDir dir;
  {
    KernelStore writer([&] { return std::optional(dir.path()); });
    (void)writer.get(kSource, 90);
  }
  fs::permissions(dir.path(), fs::perms::owner_read | fs::perms::owner_exec);
  WarningLog log;
  KernelStore store([&] { return std::optional(dir.path()); });
  KernelOrigin origin{};
  (void)store.get(kSource, 90, &origin);
  EXPECT_EQ(origin, KernelOrigin::disk);
  (void)store.get(kSource, 80, &origin);  // no entry, and none can be written
  EXPECT_EQ(origin, KernelOrigin::compiled);
  fs::permissions(dir.path(), fs::perms::owner_all);
  EXPECT_GE(log.messages().size(), 1u);
  EXPECT_LE(log.messages().size(), 2u);  // the lock file and the entry, each said once at most
}

TEST(KernelCacheConcurrency, ThreadsAskingForOneKeyCompileItOnce) {
  const ScratchDir dir;
  KernelStore store([&] { return std::optional(dir.path()); });
  constexpr int kThreads = 8;
  std::vector<std::shared_ptr<const CompiledModule>> got(kThreads);
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      ready.fetch_add(1);
      while (ready.load() < kThreads) std::this_thread::yield();
      got[t] = store.get(kSource, 90);
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& m : got) EXPECT_EQ(m, got[0]);
  EXPECT_EQ(store.statistics().compiles, 1);
  EXPECT_EQ(store.statistics().memory_hits, kThreads - 1);
}

TEST(KernelCacheConcurrency, CompileErrorsReachEveryWaiterAndAreRetried) {
  KernelStore store([] { return std::optional<fs::path>(); });
  const std::string broken = "extern \"C\" __global__ void k() { undefined_name; }";
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      try {
        (void)store.get(broken, 90);
      } catch (const cudakit::NvrtcError&) {
        failures.fetch_add(1);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 4);
  EXPECT_THROW((void)store.get(broken, 90), cudakit::NvrtcError);
}

// The child: one store over the folder its parent names, one kernel, what it took.
TEST(KernelCacheChild, GetsTheSharedKernel) {
  if (cudakit::testing::child_mode() != "jit_cache") GTEST_SKIP() << "runs as a child of ProcessesSharingTheDiskCache";
  KernelStore store([] { return kernel_cache_path(); });
  KernelOrigin origin{};
  (void)store.get(kSource + "// shared by processes\n", 90, &origin);
  std::printf("origin=%s\n", to_string(origin));
}

TEST(KernelCacheConcurrency, ProcessesSharingTheDiskCacheCompileOnce) {
  const ScratchDir dir;
  constexpr int kChildren = 4;
  std::vector<cudakit::testing::ChildResult> results(kChildren);
  std::vector<std::thread> threads;
  for (int c = 0; c < kChildren; ++c) {
    threads.emplace_back([&, c] {
      results[c] = cudakit::testing::run_this_binary(
          "KernelCacheChild.GetsTheSharedKernel",
          {"CUDAKIT_TEST_CHILD=jit_cache", "CUDAKIT_KERNEL_CACHE_PATH=" + dir.path().string()});
    });
  }
  for (auto& t : threads) t.join();
  int compiled = 0, from_disk = 0;
  for (const auto& r : results) {
    ASSERT_TRUE(r.passed()) << r.output;
    compiled += r.output.find("origin=compiled") != std::string::npos;
    from_disk += r.output.find("origin=disk") != std::string::npos;
  }
  EXPECT_EQ(compiled, 1);
  EXPECT_EQ(from_disk, kChildren - 1);
  EXPECT_EQ(files(dir.path(), ".cubin").size(), 1u);
}

// kernel_cache_path's defaults, info and clear, through the environment.
TEST(KernelCache, PathComesFromTheEnvironment) {
  const ScopedEnv disable("CUDAKIT_KERNEL_CACHE_DISABLE", nullptr);
  {
    const ScopedEnv path("CUDAKIT_KERNEL_CACHE_PATH", "/somewhere/kernels");
    EXPECT_EQ(kernel_cache_path(), fs::path("/somewhere/kernels"));
  }
  const ScopedEnv path("CUDAKIT_KERNEL_CACHE_PATH", nullptr);
  {
    const ScopedEnv xdg("XDG_CACHE_HOME", "/xdg");
    EXPECT_EQ(kernel_cache_path(), fs::path("/xdg/cudakit/kernels"));
  }
  const ScopedEnv xdg("XDG_CACHE_HOME", nullptr);
  const ScopedEnv home("HOME", "/home/u");
  EXPECT_EQ(kernel_cache_path(), fs::path("/home/u/.cache/cudakit/kernels"));
  const ScopedEnv off("CUDAKIT_KERNEL_CACHE_DISABLE", "1");
  EXPECT_FALSE(kernel_cache_path());
}

TEST(KernelCache, InfoCountsAndClearRemovesOnlyCacheFiles) {
  const ScratchDir dir;
  const ScopedEnv disable("CUDAKIT_KERNEL_CACHE_DISABLE", nullptr);
  const ScopedEnv path("CUDAKIT_KERNEL_CACHE_PATH", dir.path().c_str());
  {
    KernelStore store([] { return kernel_cache_path(); });
    (void)store.get(kSource, 90);
    (void)store.get(kSource, 80);
  }
  write_all(dir.path() / "notes.txt", "the user's own file");
  const KernelCacheInfo info = kernel_cache_info();
  EXPECT_EQ(info.path, dir.path());
  EXPECT_EQ(info.entries, 2);
  EXPECT_GT(info.bytes, 2 * 1000);
  EXPECT_EQ(info.other_files, 2);  // the two lock files
  EXPECT_EQ(clear_kernel_cache(), 4);
  EXPECT_EQ(kernel_cache_info().entries, 0);
  EXPECT_TRUE(fs::exists(dir.path() / "notes.txt"));
}

TEST(KernelCache, APathNamingAFileIsAnErrorNotAnEmptyCache) {
  const ScratchDir dir;
  write_all(dir.path() / "afile", "the user's");
  const ScopedEnv disable("CUDAKIT_KERNEL_CACHE_DISABLE", nullptr);
  const ScopedEnv path("CUDAKIT_KERNEL_CACHE_PATH", (dir.path() / "afile").c_str());
  EXPECT_THROW((void)kernel_cache_info(), InvalidArgumentError);
  EXPECT_THROW((void)clear_kernel_cache(), InvalidArgumentError);
  EXPECT_EQ(read_all(dir.path() / "afile"), "the user's");
  // A folder not made yet holds nothing.
  const ScopedEnv missing("CUDAKIT_KERNEL_CACHE_PATH", (dir.path() / "not-yet").c_str());
  EXPECT_EQ(kernel_cache_info().entries, 0);
  EXPECT_EQ(clear_kernel_cache(), 0);
}

TEST(KernelCache, ClearingAFolderThatCannotBeWrittenIsAnError) {
  if (::geteuid() == 0) GTEST_SKIP() << "root removes files from read-only folders";
  const ScratchDir dir;
  write_all(dir.path() / "0123456789abcdef.cubin", "entry");
  fs::permissions(dir.path(), fs::perms(0555));
  const ScopedEnv disable("CUDAKIT_KERNEL_CACHE_DISABLE", nullptr);
  const ScopedEnv path("CUDAKIT_KERNEL_CACHE_PATH", dir.path().c_str());
  try {
    (void)clear_kernel_cache();
    ADD_FAILURE() << "cleared a folder it cannot write";
  } catch (const FileError& e) {
    EXPECT_NE(std::string(e.what()).find("(1 of 1 files stay)"), std::string::npos) << e.what();
  }
  fs::permissions(dir.path(), fs::perms::owner_all);
  EXPECT_TRUE(fs::exists(dir.path() / "0123456789abcdef.cubin"));
}

}  // namespace
}  // namespace cudakit::jiterator::detail
