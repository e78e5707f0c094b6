#pragma once
// How much host memory the process can still fault in before the kernel's out-of-memory killer
// steps in: consulted before pinned blocks are faulted in by hand (See Note [Registered pinned
// memory]), so that a request too large fails as an allocation error instead of killing the
// process.

#include <cstddef>
#include <optional>
#include <string_view>

namespace cudakit::memory::detail {

// MemAvailable from /proc/meminfo, lowered to what the process's cgroup (v2) memory limit still
// leaves; nullopt when neither can be read.
[[nodiscard]] std::optional<std::size_t> host_memory_available();

// The parsers behind it. meminfo_available: the text of /proc/meminfo -> MemAvailable in bytes.
// cgroup_headroom: the texts of memory.max and memory.current -> max - current (0 when over),
// nullopt for "max" (no limit) or text that is not a number.
[[nodiscard]] std::optional<std::size_t> meminfo_available(std::string_view meminfo);
[[nodiscard]] std::optional<std::size_t> cgroup_headroom(std::string_view memory_max,
                                                         std::string_view memory_current);

}  // namespace cudakit::memory::detail
