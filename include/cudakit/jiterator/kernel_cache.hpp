#pragma once
// @brief The on-disk cache of runtime-compiled kernels (cubins), shared by processes, and what the
// in-memory one has done in this process. See Note [The kernel cache] in src/jiterator/kernel_store.cpp.
//
// Where: CUDAKIT_KERNEL_CACHE_PATH, else $XDG_CACHE_HOME/cudakit/kernels, else
// ~/.cache/cudakit/kernels. CUDAKIT_KERNEL_CACHE_DISABLE=1 turns the disk cache off.

#include <cstdint>
#include <filesystem>
#include <optional>

namespace cudakit::jiterator {

// The folder the disk cache uses now; nullopt when it is disabled or no folder can be named
// (no HOME).
// @return the folder, or nullopt
[[nodiscard]] std::optional<std::filesystem::path> kernel_cache_path();

// What the disk cache's folder holds (kernel_cache_info()).
struct KernelCacheInfo {
  std::filesystem::path path;  // empty when the disk cache is disabled
  std::int64_t entries = 0;    // kernel entries (*.cubin files)
  std::int64_t bytes = 0;      // their total size
  std::int64_t other_files = 0;  // lock files and leftovers of interrupted writes
};
// What the disk cache holds. Never throws for a missing folder (zero entries).
// @return the folder and its counts (all zero when disabled or missing)
// @throws InvalidArgumentError when the path names a file.
// @throws FileError when it cannot be listed.
[[nodiscard]] KernelCacheInfo kernel_cache_info();
// Removes every entry, lock and leftover in the disk cache's folder (only files this cache
// writes: *.cubin, *.lock, *.tmp.*); returns how many files went. Kernels already loaded in
// processes stay usable; their next process compiles again.
// @return the number of files removed
// @throws InvalidArgumentError as kernel_cache_info.
// @throws FileError when the folder cannot be listed or a file cannot be removed (all are tried).
std::int64_t clear_kernel_cache();

// What the process's kernel cache did since start.
struct KernelCacheStatistics {
  std::int64_t memory_hits = 0;     // kernels found compiled in this process
  std::int64_t disk_hits = 0;       // read from the disk cache
  std::int64_t compiles = 0;        // compiled by NVRTC
  std::int64_t corrupt_entries = 0; // disk entries that failed verification (recompiled)
  std::int64_t write_failures = 0;  // entries that could not be written
};
// The counts so far, read without stopping compiles on other threads. Thread-safe.
// @return the statistics since the process started
[[nodiscard]] KernelCacheStatistics kernel_cache_statistics();

}  // namespace cudakit::jiterator
