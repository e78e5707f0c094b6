#include "memory/host/detail/fault_in_pages.hpp"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <vector>

namespace cudakit::memory::detail {
namespace {

// A fresh private anonymous mapping, without huge-page advice, so residency is per 4 KiB page.
class Mapping {
 public:
  explicit Mapping(std::size_t bytes) : bytes_(bytes) {
    ptr_ = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (ptr_ == MAP_FAILED) ptr_ = nullptr;
    (void)::madvise(ptr_, bytes, MADV_NOHUGEPAGE);
  }
  ~Mapping() {
    if (ptr_) ::munmap(ptr_, bytes_);
  }
  void* get() const { return ptr_; }
  // How many of its pages are resident (mincore).
  std::size_t resident_pages() const {
    const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    std::vector<unsigned char> v((bytes_ + page - 1) / page);
    if (::mincore(ptr_, bytes_, v.data()) != 0) return static_cast<std::size_t>(-1);
    std::size_t n = 0;
    for (unsigned char c : v) n += c & 1;
    return n;
  }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_;
};

TEST(FaultInPages, EveryPageIsResidentAfterwardsWhateverTheThreadCount) {
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  struct Case {
    std::size_t pages;
    unsigned threads;
    std::size_t min_bytes_per_thread;
    unsigned expected_threads;
  };
  for (const Case c : {Case{1, 8, 0, 1},           // fewer pages than threads
                       Case{1000, 1, 0, 1},        // one thread does it all
                       Case{1001, 3, 0, 3},        // runs of unequal length
                       Case{4096, 8, 0, 8},
                       Case{4096, 8, 1024 * page, 4},  // the minimum per thread caps the count
                       Case{4096, 0, 0, 1}}) {        // 0 threads means the caller alone
    Mapping m(c.pages * page);
    ASSERT_NE(m.get(), nullptr);
    ASSERT_EQ(m.resident_pages(), 0u) << "a fresh mapping should have no resident page";
    EXPECT_EQ(fault_in_pages(m.get(), c.pages * page, page, c.threads, c.min_bytes_per_thread),
              c.expected_threads) << c.pages << " pages, " << c.threads << " threads";
    EXPECT_EQ(m.resident_pages(), c.pages) << c.pages << " pages, " << c.threads << " threads";
  }
}

TEST(FaultInPages, APartialLastPageIsFaultedAndNothingBeyondIsWritten) {
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  Mapping m(4 * page);
  ASSERT_NE(m.get(), nullptr);
  // Three whole pages and one byte of the fourth: four pages.
  EXPECT_EQ(fault_in_pages(m.get(), 3 * page + 1, page, 2, 0), 2u);
  EXPECT_EQ(m.resident_pages(), 4u);
  Mapping untouched(8 * page);
  EXPECT_EQ(fault_in_pages(untouched.get(), 0, page, 4, 0), 0u);
  EXPECT_EQ(untouched.resident_pages(), 0u);
}

}  // namespace
}  // namespace cudakit::memory::detail
