#include "cudakit/jiterator/detail/cache_entry.hpp"

#include <cstdint>
#include <cstring>

#include "cudakit/core/detail/concat.hpp"
#include "jiterator/detail/hash.hpp"

namespace cudakit::jiterator::detail {
namespace {

using cudakit::detail::concat;

// Little-endian fields at fixed places: magic[8], version u32, key bytes u32, cubin bytes u64,
// checksum u64 (hash_bytes of the cubin, seeded with that of the key).
void put(std::string& out, std::uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}
std::uint64_t get(std::string_view in, std::size_t at, int bytes) {
  std::uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) value |= std::uint64_t{static_cast<unsigned char>(in[at + i])} << (8 * i);
  return value;
}
std::uint64_t checksum(std::string_view key, std::string_view cubin) { return hash_bytes(cubin, hash_bytes(key)); }

// Spreads every bit of `x` over the whole word (an invertible multiply-xorshift mix).
constexpr std::uint64_t mix(std::uint64_t x) noexcept {
  x ^= x >> 31;
  x *= 0x7fb5d329728ea185ull;
  x ^= x >> 27;
  x *= 0x81dadef4bc2dd44dull;
  x ^= x >> 33;
  return x;
}

}  // namespace

std::uint64_t hash_bytes(std::string_view bytes, std::uint64_t seed) noexcept {
  // Two independent lanes, so that the multiplies of neighbouring words overlap in the pipeline.
  std::uint64_t a = mix(seed ^ 0x9e3779b97f4a7c15ull), b = mix(seed + bytes.size());
  const char* p = bytes.data();
  std::size_t left = bytes.size();
  const auto word = [](const char* at) {
    std::uint64_t w = 0;
    for (int i = 0; i < 8; ++i) w |= std::uint64_t{static_cast<unsigned char>(at[i])} << (8 * i);
    return w;
  };
  for (; left >= 16; p += 16, left -= 16) {
    a = (a ^ word(p)) * 0x9fb21c651e98df25ull;
    a ^= a >> 29;
    b = (b ^ word(p + 8)) * 0xc2b2ae3d27d4eb4full;
    b ^= b >> 31;
  }
  if (left >= 8) {
    a = (a ^ word(p)) * 0x9fb21c651e98df25ull;
    a ^= a >> 29;
    p += 8;
    left -= 8;
  }
  std::uint64_t tail = 0;
  for (std::size_t i = 0; i < left; ++i) tail |= std::uint64_t{static_cast<unsigned char>(p[i])} << (8 * i);
  b = (b ^ tail) * 0xc2b2ae3d27d4eb4full;
  return mix(a ^ mix(b));
}

std::string hex64(std::uint64_t value) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, value >>= 4) out[i] = kDigits[value & 0xf];
  return out;
}

std::string encode_cache_entry(std::string_view key, std::string_view cubin) {
  std::string out;
  out.reserve(kCacheEntryHeaderBytes + key.size() + cubin.size());
  out.append(kCacheEntryMagic);
  put(out, kCacheEntryVersion, 4);
  put(out, key.size(), 4);
  put(out, cubin.size(), 8);
  put(out, checksum(key, cubin), 8);
  out.append(key);
  out.append(cubin);
  return out;
}

// Why `cubin` cannot be handed to the driver, or empty when it can: cuModuleLoadData takes no
// size, so an ELF whose headers or sections point past its bytes would be read past them (a
// truncated cubin, or noise behind an ELF header, crashed the process in the driver on a lent
// H200). Checked: the ELF64 magic and class, the program and section header tables, and every
// section that occupies file bytes, all inside the image.
namespace {
std::string unloadable_cubin(std::string_view cubin) {
  constexpr std::size_t kHeader = 64;  // sizeof(Elf64_Ehdr)
  if (cubin.size() < kHeader || cubin.substr(0, 4) != "\x7f" "ELF" || cubin[4] != 2 || cubin[5] != 1) {
    return "the image is not a little-endian ELF64 file";
  }
  const auto field = [&](std::size_t offset, int bytes) { return get(cubin, offset, bytes); };
  const auto fits = [&](std::uint64_t offset, std::uint64_t count, std::uint64_t each) {
    return each == 0 || (count <= cubin.size() / each && offset <= cubin.size() - count * each);
  };
  const std::uint64_t phoff = field(0x20, 8), shoff = field(0x28, 8);
  const std::uint64_t phentsize = field(0x36, 2), phnum = field(0x38, 2);
  const std::uint64_t shentsize = field(0x3a, 2), shnum = field(0x3c, 2);
  if (!fits(phoff, phnum, phentsize)) return concat("its program headers lie past its ", cubin.size(), " bytes");
  if (!fits(shoff, shnum, shentsize)) return concat("its section headers lie past its ", cubin.size(), " bytes");
  if (shnum != 0 && shentsize < 64) return concat("section headers of ", shentsize, " bytes");
  for (std::uint64_t i = 0; i < shnum; ++i) {
    const std::uint64_t at = shoff + i * shentsize;
    constexpr std::uint64_t kNoBits = 8;  // SHT_NOBITS: occupies no file bytes
    if (field(at + 4, 4) == kNoBits) continue;
    if (!fits(field(at + 0x18, 8), field(at + 0x20, 8), 1)) {
      return concat("section ", i, " lies past its ", cubin.size(), " bytes");
    }
  }
  return {};
}
}  // namespace

std::optional<CacheEntry> decode_cache_entry(std::string_view bytes, std::string* why) {
  const auto refuse = [why](std::string reason) -> std::optional<CacheEntry> {
    if (why != nullptr) *why = std::move(reason);
    return std::nullopt;
  };
  if (bytes.size() < kCacheEntryHeaderBytes) return refuse(concat("truncated: ", bytes.size(), " bytes, shorter than the header"));
  if (bytes.substr(0, kCacheEntryMagic.size()) != kCacheEntryMagic) return refuse("not a cudakit kernel-cache entry (wrong magic)");
  const std::uint64_t version = get(bytes, 8, 4);
  if (version != kCacheEntryVersion) return refuse(concat("format version ", version, ", expected ", kCacheEntryVersion));
  const std::uint64_t key_bytes = get(bytes, 12, 4);
  const std::uint64_t cubin_bytes = get(bytes, 16, 8);
  const std::uint64_t body = bytes.size() - kCacheEntryHeaderBytes;
  if (key_bytes > body || cubin_bytes != body - key_bytes) {
    return refuse(concat("sizes disagree with the length: key ", key_bytes, " + cubin ", cubin_bytes,
                         " bytes, but ", body, " follow the header"));
  }
  CacheEntry entry;
  entry.key = bytes.substr(kCacheEntryHeaderBytes, key_bytes);
  entry.cubin = bytes.substr(kCacheEntryHeaderBytes + key_bytes);
  if (checksum(entry.key, entry.cubin) != get(bytes, 24, 8)) return refuse("checksum mismatch (the entry is damaged)");
  if (std::string bad = unloadable_cubin(entry.cubin); !bad.empty()) return refuse("a cubin the driver cannot load: " + bad);
  return entry;
}

}  // namespace cudakit::jiterator::detail
