#pragma once
// The bytes of one disk-cache entry of the jiterator: a header (magic, format version, sizes,
// checksum), the key the entry was written for, and the cubin. See Note [The kernel cache] in
// src/jiterator/kernel_store.cpp. In detail/ for the fuzz target; not for programs.

#include <optional>
#include <string>
#include <string_view>

namespace cudakit::jiterator::detail {

inline constexpr std::string_view kCacheEntryMagic = "CKJITBIN";
// 2: the checksum and the source's hash are hash_bytes (1: FNV-1a).
inline constexpr unsigned kCacheEntryVersion = 2;
inline constexpr std::size_t kCacheEntryHeaderBytes = 32;

// Views into the bytes decoded (no copy of the cubin).
struct CacheEntry {
  std::string_view key;
  std::string_view cubin;
};

[[nodiscard]] std::string encode_cache_entry(std::string_view key, std::string_view cubin);
// The entry in `bytes` (viewing them); nullopt, with the reason in *why, when it is not a whole, intact entry
// of this format (wrong magic or version, sizes that disagree with the length, bad checksum).
[[nodiscard]] std::optional<CacheEntry> decode_cache_entry(std::string_view bytes, std::string* why);

}  // namespace cudakit::jiterator::detail
