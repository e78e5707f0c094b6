// Optional-library tables (Note [Optional library tables]): each one loads or says why not, and
// the mechanism reports a library that is absent and one that lacks a required entry, shown on
// real libraries (libz, which the build needs anyway, with a made-up entry), not on a mock.

#include <gtest/gtest.h>
#include <zlib.h>

#include <string>
#include <thread>
#include <vector>

#include "cudakit/gds/detail/cufile_api.hpp"
#include "cudakit/core/detail/cupti_api.hpp"
#include "cudakit/core/detail/library_table.hpp"
#include "cudakit/nccl/detail/nccl_api.hpp"
#include "cudakit/core/detail/nvml_api.hpp"
#include "cudakit/jiterator/detail/nvrtc_api.hpp"

namespace cudakit::detail {
namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A table is either loaded, with every required entry, or not, with a reason and no entry.
template <class Table>
void expect_loaded_or_a_reason(const Table& table) {
  SCOPED_TRACE(table.status.library);
  const LibraryStatus& status = table.status;
  Table copy = table;
  if (status.loaded) {
    EXPECT_FALSE(status.file.empty());
    EXPECT_TRUE(status.reason.empty()) << status.reason;
    copy.for_each_function([&](auto pointer, const char* name, Symbol symbol) {
      if (symbol == Symbol::required) EXPECT_NE(pointer, nullptr) << name;
    });
  } else {
    EXPECT_TRUE(contains(status.reason, status.library)) << status.reason;
    EXPECT_TRUE(status.version.empty());
    copy.for_each_function([&](auto pointer, const char* name, Symbol) {
      EXPECT_EQ(pointer, nullptr) << name;
    });
  }
}

// First in this file, so that (run alone or in file order) these are the first callers.
TEST(LibraryTables, LoadOnceForConcurrentFirstCallers) {
  std::vector<const NcclApi*> seen(4, nullptr);
  std::vector<std::thread> threads;
  for (auto& slot : seen) threads.emplace_back([&slot] { slot = &nccl_api(); });
  for (auto& thread : threads) thread.join();
  for (const NcclApi* table : seen) EXPECT_EQ(table, &nccl_api());
}

TEST(LibraryTables, EachLoadsOrSaysWhyNot) {
  expect_loaded_or_a_reason(cupti_api());
  expect_loaded_or_a_reason(nvrtc_api());
  expect_loaded_or_a_reason(nccl_api());
  expect_loaded_or_a_reason(cufile_api());
  expect_loaded_or_a_reason(nvml_api());
}

TEST(LibraryTables, NvrtcOfTheToolkitLoadsWithItsVersion) {
  // NVRTC comes with the CUDA 13 toolkit the library is built against.
  const LibraryStatus& status = nvrtc_api().status;
  ASSERT_TRUE(status.loaded) << status.reason;
  EXPECT_TRUE(status.version.starts_with("13.")) << status.version;
  EXPECT_TRUE(contains(status.file, "libnvrtc")) << status.file;
}

TEST(LibraryTables, AbsentNvmlIsNamedInTheReason) {
  const LibraryStatus& status = nvml_api().status;
  if (status.loaded) GTEST_SKIP() << "NVML is here (" << status.file << ", " << status.version << ")";
  EXPECT_TRUE(contains(status.reason, "libnvidia-ml.so.1")) << status.reason;
  EXPECT_TRUE(contains(status.reason, "cannot open shared object file")) << status.reason;
}

TEST(LibraryTables, NcclVersionCodesOfBothEras) {
  EXPECT_EQ(nccl_version_string(22809), "2.28.9");
  EXPECT_EQ(nccl_version_string(2804), "2.8.4");
  EXPECT_EQ(nccl_version_string(0), "");
}

// libz with an entry it does not have: required in one table, optional in the other.
#define ZLIB_WITH_MADE_UP_REQUIRED(X) \
  X(zlibVersion, required)            \
  X(cudakit_no_such_function, required, int, (int))
#define ZLIB_WITH_MADE_UP_OPTIONAL(X) \
  X(zlibVersion, required)            \
  X(cudakit_no_such_function, optional, int, (int))

struct ZlibMissingRequired {
  CUDAKIT_LIBRARY_TABLE(ZLIB_WITH_MADE_UP_REQUIRED)
};
struct ZlibMissingOptional {
  CUDAKIT_LIBRARY_TABLE(ZLIB_WITH_MADE_UP_OPTIONAL)
};

constexpr const char* kZlib[] = {"libz.so.1", "libz.so"};

TEST(LibraryTable, MissingRequiredEntryIsNamedAndNothingIsKept) {
  const auto table = load_library_table<ZlibMissingRequired>(
      "zlib", kZlib, [](const ZlibMissingRequired&) { return std::string("never read"); });
  EXPECT_FALSE(table.status.loaded);
  EXPECT_EQ(table.status.file, "libz.so.1");
  EXPECT_EQ(table.status.reason, "libz.so.1 lacks cudakit_no_such_function");
  EXPECT_TRUE(table.status.version.empty());
  EXPECT_EQ(table.zlibVersion, nullptr);  // found, but a table is whole or empty
  EXPECT_EQ(table.cudakit_no_such_function, nullptr);
}

TEST(LibraryTable, MissingOptionalEntryStaysNullAndIsListed) {
  const auto table = load_library_table<ZlibMissingOptional>(
      "zlib", kZlib, [](const ZlibMissingOptional& t) { return std::string(t.zlibVersion()); });
  ASSERT_TRUE(table.status.loaded) << table.status.reason;
  EXPECT_EQ(table.status.version, table.zlibVersion());  // through the table: nothing links libz
  EXPECT_TRUE(table.status.version.starts_with("1.")) << table.status.version;
  EXPECT_EQ(table.status.missing_optional, std::vector<std::string>{"cudakit_no_such_function"});
  EXPECT_EQ(table.cudakit_no_such_function, nullptr);
}

TEST(LibraryTable, AbsentLibraryNamesEveryFileTriedAndTheLoadersError) {
  constexpr const char* kNames[] = {"libcudakit_absent.so.7", "libcudakit_absent.so"};
  const auto table = load_library_table<ZlibMissingOptional>(
      "absent", kNames, [](const ZlibMissingOptional&) { return std::string("never read"); });
  EXPECT_FALSE(table.status.loaded);
  EXPECT_TRUE(table.status.file.empty());
  EXPECT_TRUE(contains(table.status.reason,
                       "absent could not be loaded (tried libcudakit_absent.so.7, libcudakit_absent.so)"))
      << table.status.reason;
  EXPECT_TRUE(contains(table.status.reason, "libcudakit_absent.so: cannot open shared object file"))
      << table.status.reason;
}

}  // namespace
}  // namespace cudakit::detail
