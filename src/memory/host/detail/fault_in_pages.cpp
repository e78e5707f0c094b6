#include "memory/host/detail/fault_in_pages.hpp"

#include <algorithm>
#include <system_error>
#include <thread>
#include <vector>

namespace cudakit::memory::detail {
namespace {

void touch(volatile char* first, std::size_t pages, std::size_t page_bytes) {
  for (std::size_t i = 0; i < pages; ++i) first[i * page_bytes] = 0;
}

}  // namespace

unsigned fault_in_pages(void* base, std::size_t bytes, std::size_t page_bytes, unsigned threads,
                        std::size_t min_bytes_per_thread) {
  if (bytes == 0) return 0;
  const std::size_t pages = (bytes + page_bytes - 1) / page_bytes;
  const std::size_t by_size = std::max<std::size_t>(1, bytes / std::max<std::size_t>(1, min_bytes_per_thread));
  const auto used = static_cast<unsigned>(std::min<std::size_t>({std::max(1u, threads), by_size, pages}));
  auto* const first = static_cast<volatile char*>(base);
  // Thread t takes pages [t * pages / used, (t + 1) * pages / used).
  auto run_start = [&](std::size_t t) { return t * pages / used; };
  auto touch_run = [&](std::size_t t) {
    touch(first + run_start(t) * page_bytes, run_start(t + 1) - run_start(t), page_bytes);
  };
  std::vector<std::jthread> helpers;
  helpers.reserve(used - 1);
  unsigned started = 1;  // the calling thread counts
  try {
    for (; started < used; ++started) helpers.emplace_back([=] { touch_run(started); });
  } catch (const std::system_error&) {
    // No more threads to be had (a process or container limit): the runs without a helper fall
    // to the calling thread, which is slower but still faults every page.
  }
  for (unsigned t = started; t < used; ++t) touch_run(t);
  touch_run(0);
  return started;  // the helpers join here
}

}  // namespace cudakit::memory::detail
