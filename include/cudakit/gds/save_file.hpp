#pragma once
// @brief save_file: a whole file written from buffers or tensors, optionally atomically (a
// temporary file beside it, synced, then renamed over it), so that a failed save leaves the old
// file's bytes as they were.

#include <filesystem>
#include <span>

#include "cudakit/core/optional_stream.hpp"
#include "cudakit/gds/gds_file.hpp"

namespace cudakit::gds {

struct SaveOptions {
  bool atomic = false;  // temporary file + fsync + rename (+ fsync of the folder)
  bool fsync = false;   // non-atomic saves: fsync before returning (atomic ones always sync)
};

// Replaces `path` with a file holding each request's bytes at its offset (gaps read as zeros).
// @throws IoError naming the path (and the temporary file) for a write, sync or rename that
// failed; with `atomic`, the old file is then untouched and the temporary one removed.
IoReport save_file(const std::filesystem::path& path, std::span<const IoRequest> requests,
                   SaveOptions save = {}, GdsOptions options = GdsOptions::from_environment(),
                   OptionalStream stream = {});
IoReport save_file(const std::filesystem::path& path, std::span<const TensorAt> tensors,
                   SaveOptions save = {}, GdsOptions options = GdsOptions::from_environment(),
                   OptionalStream stream = {});

}  // namespace cudakit::gds
