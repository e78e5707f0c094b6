// `cudakit jit cache info|clear` from the built binary, over a cache folder the test fills.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "support/cudakit_cli.hpp"
#include "support/scratch_dir.hpp"

namespace {

namespace fs = std::filesystem;
using cudakit::testing::run_cudakit;
using cudakit::testing::ScratchDir;

TEST(CudakitCliJit, CacheInfoCountsEntriesAndClearEmptiesIt) {
  if (!fs::exists(cudakit::testing::cudakit_cli_path())) GTEST_SKIP() << "the cudakit tool is not built";
  const ScratchDir dir;
  const fs::path cache = dir.path() / "kernels";
  fs::create_directories(cache);
  for (const char* name : {"0123456789abcdef.cubin", "fedcba9876543210.cubin"}) std::ofstream(cache / name) << "1234567890";
  std::ofstream(cache / "0123456789abcdef.lock");
  std::ofstream(cache / "mine.txt") << "not the cache's";
  ::setenv("CUDAKIT_KERNEL_CACHE_PATH", cache.c_str(), 1);
  const auto info = run_cudakit({"jit", "cache", "info"}, dir.path());
  EXPECT_EQ(info.status, 0) << info.err;
  EXPECT_NE(info.out.find("path: " + cache.string()), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("entries: 2\n"), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("bytes: 20\n"), std::string::npos) << info.out;
  const auto clear = run_cudakit({"jit", "cache", "clear"}, dir.path());
  EXPECT_EQ(clear.status, 0) << clear.err;
  EXPECT_NE(clear.out.find("removed 3 files"), std::string::npos) << clear.out;
  EXPECT_TRUE(fs::exists(cache / "mine.txt"));
  EXPECT_NE(run_cudakit({"jit", "cache", "info"}, dir.path()).out.find("entries: 0\n"), std::string::npos);
  const auto bad = run_cudakit({"jit", "cache", "shrink"}, dir.path());
  EXPECT_EQ(bad.status, 2);
  ::unsetenv("CUDAKIT_KERNEL_CACHE_PATH");
}

}  // namespace
