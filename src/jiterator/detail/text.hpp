#pragma once
// Building the text of generated kernels and cache keys without streams: core's concat() makes
// an ostringstream per call, and generating one kernel's source took some fifty of them, a tenth
// of a disk-warm first call's budget (notes/figures.md, "The jiterator's first and cached
// calls"). Strings are
// appended as they are and integers in decimal, as concat() writes them; other kinds do not
// compile (messages keep using concat()).

#include <charconv>
#include <concepts>
#include <string>
#include <string_view>
#include <type_traits>

namespace cudakit::jiterator::detail {

template <class Part>
void append_part(std::string& out, const Part& part) {
  if constexpr (std::is_same_v<Part, char>) {
    out += part;
  } else if constexpr (std::integral<Part> && !std::is_same_v<Part, bool>) {
    char digits[24];
    const auto end = std::to_chars(digits, digits + sizeof digits, part).ptr;
    out.append(digits, end);
  } else {
    static_assert(std::is_convertible_v<const Part&, std::string_view>, "append(): strings and integers only");
    out += std::string_view(part);
  }
}

// Appends `parts` to `out`.
template <class... Parts>
void append(std::string& out, const Parts&... parts) {
  (append_part(out, parts), ...);
}

// The parts, joined.
template <class... Parts>
[[nodiscard]] std::string text(const Parts&... parts) {
  std::string out;
  append(out, parts...);
  return out;
}

}  // namespace cudakit::jiterator::detail
