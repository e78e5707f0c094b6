// Host tier: libcudakit's machine code is mapped when the library loads (Note [Prefaulting the
// library's code]): the executable mapping that holds the library's functions is resident.

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/utsname.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include "cudakit/core/detail/text_file.hpp"

namespace cudakit {
namespace {

struct Mapping {
  std::uintptr_t begin = 0, end = 0;
  std::string path;
  long size_kb = -1, rss_kb = -1;
};

// The /proc/self/smaps entry of the mapping that holds `address`.
Mapping mapping_holding(const void* address) {
  const auto at = reinterpret_cast<std::uintptr_t>(address);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  Mapping m;
  bool inside = false;
  while (std::getline(smaps, line)) {
    unsigned long begin = 0, end = 0;
    char permissions[8] = {};
    if (std::sscanf(line.c_str(), "%lx-%lx %7s", &begin, &end, permissions) == 3 && line.find(':') > 8) {
      if (inside) break;
      inside = at >= begin && at < end;
      if (inside) {
        m.begin = begin;
        m.end = end;
        m.path = line.substr(line.rfind(' ') + 1);
      }
      continue;
    }
    if (!inside) continue;
    std::istringstream fields(line);
    std::string key;
    long kb = 0;
    fields >> key >> kb;
    if (key == "Size:") m.size_kb = kb;
    if (key == "Rss:") m.rss_kb = kb;
  }
  return m;
}

bool kernel_populates() {  // MADV_POPULATE_READ: Linux 5.14
  utsname u{};
  if (::uname(&u) != 0) return false;
  int major = 0, minor = 0;
  if (std::sscanf(u.release, "%d.%d", &major, &minor) != 2) return false;
  return major > 5 || (major == 5 && minor >= 14);
}

TEST(CodePrefault, TheLibrarysCodeIsResidentFromItsLoad) {
  const char* off = std::getenv("CUDAKIT_PREFAULT_CODE");
  if (off != nullptr && std::string_view(off) == "0") GTEST_SKIP() << "CUDAKIT_PREFAULT_CODE=0 in this environment";
  if (!kernel_populates()) GTEST_SKIP() << "kernel older than 5.14: no MADV_POPULATE_READ";
  const void* function = reinterpret_cast<const void*>(&detail::try_read_text_file);
  Dl_info info{};
  ASSERT_NE(::dladdr(function, &info), 0);
  if (std::string_view(info.dli_fname).find("libcudakit") == std::string_view::npos) {
    GTEST_SKIP() << "cudakit is linked into " << info.dli_fname << ", not loaded as libcudakit";
  }
  const Mapping m = mapping_holding(function);
  ASSERT_GT(m.size_kb, 0) << "no /proc/self/smaps entry holds " << function;
  EXPECT_NE(m.path.find("libcudakit"), std::string::npos) << m.path;
  // Every page of the code segment mapped (a few may have been unmapped and faulted back in
  // since; the figure without prefaulting is the pages run so far, a small part of the segment).
  EXPECT_GE(m.rss_kb, m.size_kb * 9 / 10) << m.path << ": " << m.rss_kb << " KiB resident of " << m.size_kb;
}

}  // namespace
}  // namespace cudakit
