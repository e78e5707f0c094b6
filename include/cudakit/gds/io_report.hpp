#pragma once
// @brief IoReport and IoStatistics: which path a GdsFile transfer took, its bytes and its time.

#include <cstddef>
#include <cstdint>
#include <string>

namespace cudakit::gds {

// The mechanism that moved a transfer's bytes. See Note [Four paths] in gds/gds_file.hpp, and for
// `mapped` Note [Host loads of cached files] in src/gds/mapped_file.cpp.
enum class IoPath : std::uint8_t {
  cufile_direct,    // cuFile with nvidia-fs: DMA between the file system and device memory
  cufile_compat,    // cuFile without nvidia-fs: libcufile's own POSIX compatibility mode
  cudakit_odirect,  // cudakit's engine: parallel O_DIRECT I/O through pinned bounce buffers
  buffered,         // cudakit's engine through the page cache (see IoReport::note for why)
  mapped,           // host tensors that are the file's page-cache pages, mapped: no byte copied
};

// How many IoPath values there are.
inline constexpr int kIoPathCount = 5;

// "cufile_direct", "cufile_compat", "cudakit_odirect", "buffered", "mapped".
// @param path the path
// @return its name (a static string)
[[nodiscard]] const char* to_string(IoPath path) noexcept;

// Which way a transfer went: `load` (file to memory) or `save` (memory to file).
enum class IoDirection : std::uint8_t { load, save };

// One call's transfer. A call whose bytes went partly through O_DIRECT and partly through the
// page cache (an unaligned head or tail, chunks found in the page cache) reports
// cudakit_odirect, with both counts and the reason in `note`.
struct IoReport {
  IoPath path = IoPath::buffered;  // the mechanism (of the call's largest part, for a batch)
  IoDirection direction = IoDirection::load;  // load or save
  std::size_t bytes = 0;           // payload bytes moved (what the caller asked for)
  std::size_t direct_bytes = 0;    // of which read or written with O_DIRECT (or by cuFile)
  std::size_t buffered_bytes = 0;  // of which through the page cache
  std::size_t requests = 0;        // buffers or tensors in the call (1 but for batches)
  int io_threads = 0;              // threads that did the file I/O
  std::size_t chunk_bytes = 0;     // the engine's chunk size (0 for cuFile)
  double seconds = 0.0;            // wall time of the call
  std::string note;                // why this path: "O_DIRECT refused by tmpfs: ...", ...

  // @return bytes / seconds in GB/s (10^9 bytes per second); 0 when no time was measured.
  [[nodiscard]] double gigabytes_per_second() const noexcept {
    return seconds > 0 ? static_cast<double>(bytes) / seconds / 1e9 : 0.0;
  }
  // "load 4294967296 bytes via cudakit_odirect in 2.61 s (1.65 GB/s), 8 threads, ...".
  // @return the report as one line of text, for logs
  [[nodiscard]] std::string to_string() const;
};

// Sums over a GdsFile's calls, per path.
struct IoStatistics {
  // The sums of the calls that took one path.
  struct PerPath {
    std::size_t calls = 0;  // calls reported with this path
    std::size_t bytes = 0;  // their payload bytes
    double seconds = 0.0;  // their wall time
  };
  PerPath by_path[kIoPathCount];  // indexed by IoPath
  std::size_t loads = 0;  // load calls, all paths
  std::size_t saves = 0;  // save calls, all paths

  // @param path a path
  // @return the sums of the calls that took it
  [[nodiscard]] const PerPath& of(IoPath path) const noexcept {
    return by_path[static_cast<int>(path)];
  }
  // Counts one call: its path's calls, bytes and seconds, and loads or saves. Not synchronized
  // (GdsFile calls it under its lock).
  // @param report the call's report
  void add(const IoReport& report) noexcept;
};

}  // namespace cudakit::gds
