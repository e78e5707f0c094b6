#include "memory/host/detail/host_memory.hpp"

#include <gtest/gtest.h>

namespace cudakit::memory::detail {
namespace {

TEST(HostMemory, ReadsMemAvailableInKibibytes) {
  EXPECT_EQ(meminfo_available("MemTotal:       24000000 kB\nMemFree:  100 kB\nMemAvailable:   2048 kB\n"),
            std::size_t{2048} * 1024);
  EXPECT_EQ(meminfo_available("MemTotal: 5 kB\n"), std::nullopt);
  EXPECT_EQ(meminfo_available("MemAvailable: lots\n"), std::nullopt);
}

TEST(HostMemory, CgroupHeadroomIsLimitMinusUseAndNothingWithoutALimit) {
  EXPECT_EQ(cgroup_headroom("1073741824\n", "73741824\n"), std::size_t{1000000000});
  EXPECT_EQ(cgroup_headroom("100\n", "150\n"), std::size_t{0});  // over the limit already
  EXPECT_EQ(cgroup_headroom("max\n", "150\n"), std::nullopt);
  EXPECT_EQ(cgroup_headroom("", "150"), std::nullopt);
}

TEST(HostMemory, ThisMachineReportsSomeMemoryAvailable) {
  const auto available = host_memory_available();
  ASSERT_TRUE(available.has_value()) << "neither /proc/meminfo nor a cgroup limit could be read";
  EXPECT_GT(*available, std::size_t{16} << 20);
}

}  // namespace
}  // namespace cudakit::memory::detail
