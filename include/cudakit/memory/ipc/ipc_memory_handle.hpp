#pragma once
// @brief IpcMemoryHandle: what another process needs to open a block of cudakit's caching allocator
// (torch's storage._share_cuda_() tuple): which machine, process and device it comes from, how
// the memory is shared, where the block lies in it, and the name of the ref-count record that
// keeps it alive. Made by export_ipc_memory() (memory/ipc/ipc_memory_export.hpp), opened by
// IpcMemory::open() (memory/ipc/ipc_memory.hpp), carried by send_ipc_handle() / receive_ipc_handle()
// (memory/ipc/ipc_socket.hpp).
//
// Its bytes (to_bytes) hold everything but the file descriptors of the expandable kind, which
// only a Unix-domain socket can carry to another process (SCM_RIGHTS); the legacy kind needs
// none, so its bytes may travel any way (a pipe, a file, a command line as hex).

#include <sys/types.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cudakit/memory/file_descriptor.hpp"

namespace cudakit::memory {

// How a block's memory is shared.
enum class IpcMemoryKind : std::uint8_t {
  // A cudaMalloc'd segment (expandable_segments:False), shared with cudaIpcGetMemHandle.
  legacy = 1,
  // Chunks of an expandable arena (cuMemCreate), each shared as a POSIX file descriptor.
  expandable = 2,
};

// The description of one exported block, and for the expandable kind its descriptors.
// Move-only (it owns the descriptors).
class IpcMemoryHandle {
 public:
  static constexpr char kMagic[8] = {'C', 'K', 'I', 'P', 'C', 'M', 'E', 'M'};  // to_bytes()'s first 8 bytes
  static constexpr std::uint32_t kVersion = 1;  // the version to_bytes() writes and from_bytes() reads
  static constexpr std::size_t kLegacyHandleBytes = 64;  // sizeof(cudaIpcMemHandle_t)
  static constexpr std::size_t kMaxChunks = 65536;  // the most chunks from_bytes() accepts
  static constexpr std::size_t kMaxText = 255;  // boot id, device UUID, record name

  IpcMemoryKind kind = IpcMemoryKind::legacy;  // how the memory is shared
  std::string boot_id;              // the exporting machine's /proc/sys/kernel/random/boot_id
  pid_t exporter_pid = 0;  // the exporting process
  std::uint64_t exporter_start_time = 0;  // clock ticks since boot (/proc/<pid>/stat)
  pid_t importer_pid = 0;           // the process it is reserved for; 0: any
  std::string device_uuid;          // "GPU-xxxxxxxx-...": the importer finds its device by it
  std::string ref_record;           // the POSIX shared-memory name of its ref-count record
  std::uint64_t size = 0;           // bytes of the block (its rounded size)
  std::uint64_t offset = 0;         // where the block starts in the shared memory
  std::uint64_t mapped_size = 0;    // bytes shared: the segment, or the chunks together
  std::array<unsigned char, kLegacyHandleBytes> legacy_handle{};  // legacy: cudaIpcMemHandle_t
  std::vector<std::uint64_t> chunk_sizes;  // expandable: in address order, one fd each
  // expandable: one descriptor per chunk; not part of the bytes.
  std::vector<FileDescriptor> fds;

  // An empty legacy handle (export_ipc_memory() and from_bytes() make real ones).
  IpcMemoryHandle() = default;
  // Takes over the description and the descriptors.
  IpcMemoryHandle(IpcMemoryHandle&&) noexcept = default;
  // Takes over the description and the descriptors, closing this handle's own.
  // @return this handle.
  IpcMemoryHandle& operator=(IpcMemoryHandle&&) noexcept = default;

  // The description in a versioned binary form (little-endian), without the descriptors.
  // @return the bytes, starting with kMagic.
  [[nodiscard]] std::string to_bytes() const;
  // Reads to_bytes()'s form: outside input, checked field by field.
  // @param bytes the bytes to read.
  // @return the handle, without descriptors.
  // @throws InvalidArgumentError naming what is wrong: truncated (which field, at which
  // offset), wrong magic, an unsupported version, an unknown kind, text too long or malformed,
  // sizes that do not fit together, trailing bytes.
  [[nodiscard]] static IpcMemoryHandle from_bytes(std::string_view bytes);
  // The same bytes as lowercase hex, and back.
  // @return to_bytes() as lowercase hex.
  [[nodiscard]] std::string to_hex() const;
  // Reads to_hex()'s form.
  // @param hex the hex digits (either case).
  // @return the handle, without descriptors.
  // @throws InvalidArgumentError for bad hex, or bytes from_bytes() refuses.
  [[nodiscard]] static IpcMemoryHandle from_hex(std::string_view hex);
};

}  // namespace cudakit::memory
