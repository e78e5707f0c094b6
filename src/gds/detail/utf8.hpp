#pragma once
// UTF-8 checks for text read from files: safetensors headers must be UTF-8 (as JSON and
// safetensors' own reader require), and an error that quotes a file's bytes must still be valid
// UTF-8, or Python cannot show it (See Note [Quoting file bytes]).

#include <cstddef>
#include <string>
#include <string_view>

namespace cudakit::gds::detail {

// The offset of the first byte that does not belong to a well-formed UTF-8 sequence (RFC 3629:
// no overlong forms, no surrogates, nothing past U+10FFFF), or std::string_view::npos.
[[nodiscard]] std::size_t first_invalid_utf8(std::string_view text) noexcept;

// `text` with each byte outside a well-formed sequence written as \xNN: valid UTF-8 always.
[[nodiscard]] std::string escape_invalid_utf8(std::string_view text);

}  // namespace cudakit::gds::detail
