#include "cudakit/memory/ipc/ipc_memory_handle.hpp"

#include <cstring>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/error.hpp"
#include "memory/ipc/detail/ipc_ref_record.hpp"

namespace cudakit::memory {
using cudakit::detail::concat;

// Note [IPC memory handle bytes]
// Little-endian, fixed order:
//   magic "CKIPCMEM" (8) | version u32 | kind u8 | exporter pid u32 | exporter start u64 |
//   importer pid u32 | boot id | device UUID | record name   (text: u16 length, then bytes) |
//   size u64 | offset u64 | mapped size u64 |
//   legacy: cudaIpcMemHandle_t (64)  /  expandable: chunk count u32, then each size u64
// A new field means a new version: a reader refuses versions it does not know rather than
// guess at their layout.

namespace {
constexpr const char* kApi = "IpcMemoryHandle::from_bytes";

class Writer {
 public:
  void bytes(const void* p, std::size_t n) { out_.append(static_cast<const char*>(p), n); }
  template <class T>
  void integer(T v) {
    auto u = static_cast<std::make_unsigned_t<T>>(v);
    for (std::size_t i = 0; i < sizeof(T); ++i) out_.push_back(static_cast<char>((u >> (8 * i)) & 0xff));
  }
  void text(const std::string& s) {
    integer(static_cast<std::uint16_t>(s.size()));
    out_ += s;
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  std::string_view bytes(std::size_t n, const char* field) {
    if (in_.size() - at_ < n) {
      throw InvalidArgumentError(kApi, concat("truncated: ", field, " needs ", n, " bytes at offset ", at_,
                                              ", only ", in_.size() - at_, " remain"));
    }
    std::string_view out = in_.substr(at_, n);
    at_ += n;
    return out;
  }
  template <class T>
  T integer(const char* field) {
    const std::string_view b = bytes(sizeof(T), field);
    std::make_unsigned_t<T> u = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) {
      u |= static_cast<std::make_unsigned_t<T>>(static_cast<unsigned char>(b[i])) << (8 * i);
    }
    return static_cast<T>(u);
  }
  std::string text(const char* field) {
    const auto n = integer<std::uint16_t>(field);
    if (n > IpcMemoryHandle::kMaxText) {
      throw InvalidArgumentError(kApi, concat(field, " is ", n, " bytes long, more than the ",
                                              IpcMemoryHandle::kMaxText, " allowed"));
    }
    return std::string(bytes(n, field));
  }
  [[nodiscard]] std::size_t remaining() const { return in_.size() - at_; }

 private:
  std::string_view in_;
  std::size_t at_ = 0;
};

void check_printable(const std::string& s, const char* field) {
  for (char c : s) {
    if (c < 0x21 || c > 0x7e) {
      throw InvalidArgumentError(kApi, concat(field, " holds a byte that is not printable ASCII (",
                                              static_cast<int>(static_cast<unsigned char>(c)), ")"));
    }
  }
  if (s.empty()) throw InvalidArgumentError(kApi, concat(field, " is empty"));
}

std::string hex_of(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) {
    const auto u = static_cast<unsigned char>(c);
    out.push_back(kDigits[u >> 4]);
    out.push_back(kDigits[u & 15]);
  }
  return out;
}

}  // namespace

std::string IpcMemoryHandle::to_bytes() const {
  Writer w;
  w.bytes(kMagic, sizeof kMagic);
  w.integer(kVersion);
  w.integer(static_cast<std::uint8_t>(kind));
  w.integer(static_cast<std::uint32_t>(exporter_pid));
  w.integer(exporter_start_time);
  w.integer(static_cast<std::uint32_t>(importer_pid));
  w.text(boot_id);
  w.text(device_uuid);
  w.text(ref_record);
  w.integer(size);
  w.integer(offset);
  w.integer(mapped_size);
  if (kind == IpcMemoryKind::legacy) {
    w.bytes(legacy_handle.data(), legacy_handle.size());
  } else {
    w.integer(static_cast<std::uint32_t>(chunk_sizes.size()));
    for (std::uint64_t c : chunk_sizes) w.integer(c);
  }
  return w.take();
}

IpcMemoryHandle IpcMemoryHandle::from_bytes(std::string_view bytes) {
  Reader r(bytes);
  IpcMemoryHandle h;
  const std::string_view magic = r.bytes(sizeof kMagic, "magic");
  if (magic != std::string_view(kMagic, sizeof kMagic)) {
    throw InvalidArgumentError(kApi, concat("not an IPC memory handle: the magic is ", hex_of(magic),
                                            ", expected ", hex_of(std::string_view(kMagic, sizeof kMagic)),
                                            " (\"CKIPCMEM\")"));
  }
  const auto version = r.integer<std::uint32_t>("version");
  if (version != kVersion) {
    throw InvalidArgumentError(kApi, concat("handle version ", version, " is not supported (this build reads version ",
                                            kVersion, ")"));
  }
  const auto kind = r.integer<std::uint8_t>("kind");
  if (kind != static_cast<std::uint8_t>(IpcMemoryKind::legacy) &&
      kind != static_cast<std::uint8_t>(IpcMemoryKind::expandable)) {
    throw InvalidArgumentError(kApi, concat("kind ", int{kind}, " is neither 1 (legacy) nor 2 (expandable)"));
  }
  h.kind = static_cast<IpcMemoryKind>(kind);
  const auto exporter = r.integer<std::uint32_t>("exporter pid");
  h.exporter_start_time = r.integer<std::uint64_t>("exporter start time");
  const auto importer = r.integer<std::uint32_t>("importer pid");
  // pid_t is a positive int: a pid above INT32_MAX cannot be real.
  if (exporter == 0 || exporter > 0x7fffffffu) {
    throw InvalidArgumentError(kApi, concat("exporter pid ", exporter, " is not a valid process id"));
  }
  if (importer > 0x7fffffffu) {
    throw InvalidArgumentError(kApi, concat("importer pid ", importer, " is not a valid process id"));
  }
  h.exporter_pid = static_cast<pid_t>(exporter);
  h.importer_pid = static_cast<pid_t>(importer);
  h.boot_id = r.text("boot id");
  check_printable(h.boot_id, "boot id");
  h.device_uuid = r.text("device UUID");
  check_printable(h.device_uuid, "device UUID");
  h.ref_record = r.text("ref-count record name");
  if (!detail::IpcRefRecord::valid_name(h.ref_record)) {
    throw InvalidArgumentError(kApi, concat("ref-count record name '", h.ref_record, "' does not start with ",
                                            detail::IpcRefRecord::kNamePrefix,
                                            " followed by letters, digits and '_'"));
  }
  h.size = r.integer<std::uint64_t>("size");
  h.offset = r.integer<std::uint64_t>("offset");
  h.mapped_size = r.integer<std::uint64_t>("mapped size");
  if (h.size == 0) throw InvalidArgumentError(kApi, "the block's size is 0");
  if (h.offset > h.mapped_size || h.size > h.mapped_size - h.offset) {
    throw InvalidArgumentError(kApi, concat("a block of ", h.size, " bytes at offset ", h.offset,
                                            " does not fit in the ", h.mapped_size, " bytes shared"));
  }
  if (h.kind == IpcMemoryKind::legacy) {
    const std::string_view raw = r.bytes(kLegacyHandleBytes, "cudaIpcMemHandle_t");
    std::memcpy(h.legacy_handle.data(), raw.data(), raw.size());
  } else {
    const auto count = r.integer<std::uint32_t>("chunk count");
    if (count == 0 || count > kMaxChunks) {
      throw InvalidArgumentError(kApi, concat("chunk count ", count, " is not in [1, ", kMaxChunks, "]"));
    }
    // Each size is 8 bytes: a count the remaining bytes cannot hold is refused before any
    // memory is reserved for it.
    if (r.remaining() / 8 < count) {
      throw InvalidArgumentError(kApi, concat("truncated: ", count, " chunk sizes need ", std::size_t{count} * 8,
                                              " bytes, only ", r.remaining(), " remain"));
    }
    h.chunk_sizes.reserve(count);
    std::uint64_t total = 0;
    for (std::uint32_t i = 0; i < count; ++i) {
      const auto c = r.integer<std::uint64_t>("chunk size");
      if (c == 0 || c > h.mapped_size - total) {
        throw InvalidArgumentError(kApi, concat("chunk ", i, " of ", c, " bytes does not fit in the ",
                                                h.mapped_size, " bytes shared (", total, " before it)"));
      }
      total += c;
      h.chunk_sizes.push_back(c);
    }
    if (total != h.mapped_size) {
      throw InvalidArgumentError(kApi, concat("the chunks add up to ", total, " bytes, not the ", h.mapped_size,
                                              " bytes shared"));
    }
  }
  if (r.remaining() != 0) {
    throw InvalidArgumentError(kApi, concat(r.remaining(), " bytes follow the end of the handle"));
  }
  return h;
}

std::string IpcMemoryHandle::to_hex() const { return hex_of(to_bytes()); }

IpcMemoryHandle IpcMemoryHandle::from_hex(std::string_view hex) {
  if (hex.size() % 2 != 0) {
    throw InvalidArgumentError("IpcMemoryHandle::from_hex", concat("odd number of hex digits (", hex.size(), ")"));
  }
  auto digit = [&](char c, std::size_t at) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    throw InvalidArgumentError("IpcMemoryHandle::from_hex", concat("character ", at, " is not a hex digit"));
  };
  std::string bytes(hex.size() / 2, '\0');
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    bytes[i] = static_cast<char>(digit(hex[2 * i], 2 * i) * 16 + digit(hex[2 * i + 1], 2 * i + 1));
  }
  return from_bytes(bytes);
}

}  // namespace cudakit::memory
