#pragma once
// FNV-1a, 64 bits: the jiterator's keys and its cache entries' checksums (not a defence against
// a forger: the cache folder is the user's own).

#include <cstdint>
#include <string>
#include <string_view>

namespace cudakit::jiterator::detail {

inline constexpr std::uint64_t kFnvOffset = 14695981039346656037ull;

[[nodiscard]] constexpr std::uint64_t fnv1a(std::string_view bytes, std::uint64_t hash = kFnvOffset) noexcept {
  for (const char c : bytes) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ull;
  }
  return hash;
}

// Sixteen lowercase hex digits.
[[nodiscard]] std::string hex64(std::uint64_t value);

}  // namespace cudakit::jiterator::detail
