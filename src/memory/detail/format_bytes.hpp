#pragma once
// Byte counts as people read them, in the allocator's reports and summary: "1.50 MiB".

#include <cstddef>
#include <string>

namespace cudakit::memory::detail {

// Two decimals in the largest of GiB, MiB and KiB that the count reaches; plain bytes below.
[[nodiscard]] std::string format_bytes(std::size_t bytes);

}  // namespace cudakit::memory::detail
