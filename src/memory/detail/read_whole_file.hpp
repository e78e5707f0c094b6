#pragma once
// A whole input file in memory, plain or gzip-compressed (zlib tells them apart by their first
// bytes): allocation traces and snapshots alike are often kept compressed.

#include <cstddef>
#include <string>
#include <string_view>

namespace cudakit::memory::detail {

// The file's bytes, decompressed, at most input_size_limit() of them (outside_input.hpp). `api`
// names the caller in errors.
// @throws InvalidArgumentError when it cannot be opened or read (a damaged or truncated gzip
//         stream among them) or holds more than the limit.
[[nodiscard]] std::string read_whole_file(const std::string& path, std::string_view api);
// At most `limit` bytes from the start of the file, decompressed ("" when it cannot be read).
[[nodiscard]] std::string read_file_start(const std::string& path, std::size_t limit) noexcept;

}  // namespace cudakit::memory::detail
