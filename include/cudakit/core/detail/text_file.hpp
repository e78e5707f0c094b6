#pragma once
// Reading a whole text file: the profiler's JSON files, the host's /proc and cgroup figures.

#include <optional>
#include <string>

namespace cudakit::detail {

// The whole text of `path`; nullopt when it cannot be opened or read, with the errno that says
// why in *error when `error` is given.
[[nodiscard]] std::optional<std::string> try_read_text_file(const std::string& path, int* error = nullptr);

}  // namespace cudakit::detail
