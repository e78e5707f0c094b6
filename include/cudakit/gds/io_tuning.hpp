#pragma once
// @brief The engine's chunk size and thread count for a file: the file system's default, then the
// caller's options. See Note [Tuning per file system] in src/gds/io_tuning.cpp.

#include <string>

#include "cudakit/gds/file_io_engine.hpp"
#include "cudakit/gds/gds_options.hpp"

namespace cudakit::gds {

// "ext4", "xfs", "tmpfs", "nfs", "overlay", ... for the file system holding `fd`; "unknown"
// where statfs fails or the magic number is not one cudakit knows.
// @param fd an open descriptor of the file
// @return the file system's name
[[nodiscard]] std::string file_system_name(int fd);

// The default for a file system named by file_system_name, with `options`' non-zero fields
// taking precedence. Remote file systems (nfs, lustre, gpfs, fuse) default to larger chunks
// and more threads than local ones.
// @param file_system a name from file_system_name
// @param options the caller's options (chunk_bytes and io_threads: 0 keeps the default; the
//   other fields are taken as they are)
// @return the engine's settings
[[nodiscard]] IoTuning tuning_for(const std::string& file_system, const GdsOptions& options);

}  // namespace cudakit::gds
