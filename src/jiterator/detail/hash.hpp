#pragma once
// Hashes of the jiterator's keys and its cache entries' checksums (not a defence against a
// forger: the cache folder is the user's own). FNV-1a, 64 bits, for short strings.

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

// A 64-bit hash of long byte strings, eight bytes per step (FNV-1a takes one): the hash of a
// kernel's source in its disk key and the checksum of a disk entry, which a first call with the
// disk cache warm computes over some ten kilobytes each. Stable across runs and machines (the
// disk cache depends on it); little-endian words.
[[nodiscard]] std::uint64_t hash_bytes(std::string_view bytes, std::uint64_t seed = 0) noexcept;

// Sixteen lowercase hex digits.
[[nodiscard]] std::string hex64(std::uint64_t value);

}  // namespace cudakit::jiterator::detail
