#pragma once
// Faulting in the pages of a fresh anonymous mapping from several threads at once, before the
// mapping is page-locked (See Note [Registered pinned memory] in registered_pinned_memory_provider.cpp).

#include <cstddef>

namespace cudakit::memory::detail {

// Writes a zero byte into every `page_bytes` page of [base, base + bytes), so that the kernel
// allocates (and zeroes) each page now. The pages are split into contiguous runs, one per
// thread, with at most `threads` threads and at least `min_bytes_per_thread` bytes a thread;
// the calling thread takes the first run. Returns the number of threads used. Meant for fresh
// memory: whatever the first byte of each page held is overwritten.
unsigned fault_in_pages(void* base, std::size_t bytes, std::size_t page_bytes, unsigned threads,
                        std::size_t min_bytes_per_thread);

}  // namespace cudakit::memory::detail
