#include "cudakit/gds/io_tuning.hpp"

#include <sys/vfs.h>

#include <cstdint>

namespace cudakit::gds {

// Note [Tuning per file system]
// O_DIRECT bandwidth of an NVMe drive grows with the number of requests in flight until the
// drive's queues are full: with 8 MiB chunks, 8 threads keep 64 MiB in flight, several times what
// a PCIe 4/5 NVMe drive needs, and the same 8 threads copying from the page cache (each
// memcpy-bound) reach what pinned copies to the device can take (notes/figures.md, "GDS"). Network
// and parallel file systems (NFS, Lustre, GPFS, FUSE) have higher latency per request, so larger
// chunks and more threads. These are the defaults bench/gds_bench.cpp's sweep (`gds_bench
// --sweep`) is there to confirm or move, per machine; CUDAKIT_GDS_CHUNK_BYTES and
// CUDAKIT_GDS_IO_THREADS override them.

std::string file_system_name(int fd) {
  struct statfs info {};
  if (::fstatfs(fd, &info) != 0) return "unknown";
  switch (static_cast<std::uint32_t>(info.f_type)) {
    case 0xEF53u: return "ext4";
    case 0x58465342u: return "xfs";
    case 0x9123683Eu: return "btrfs";
    case 0x01021994u: return "tmpfs";
    case 0x794C7630u: return "overlay";
    case 0x6969u: return "nfs";
    case 0x0BD00BD0u: return "lustre";
    case 0x47504653u: return "gpfs";
    case 0x65735546u: return "fuse";
    case 0x2FC12FC1u: return "zfs";
    default: return "unknown";
  }
}

IoTuning tuning_for(const std::string& file_system, const GdsOptions& options) {
  IoTuning tuning;
  const bool remote = file_system == "nfs" || file_system == "lustre" || file_system == "gpfs" ||
                      file_system == "fuse";
  tuning.chunk_bytes = remote ? 16u << 20 : 8u << 20;
  tuning.io_threads = remote ? 16 : 8;
  if (options.chunk_bytes != 0) tuning.chunk_bytes = options.chunk_bytes;
  if (options.io_threads != 0) tuning.io_threads = options.io_threads;
  tuning.buffers_per_thread = options.buffers_per_thread;
  tuning.page_cache_check = options.page_cache_check;
  tuning.cold_reads = options.cold_reads;
  return tuning;
}

}  // namespace cudakit::gds
