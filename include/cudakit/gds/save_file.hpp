#pragma once
// @brief save_file: a whole file written from buffers or tensors, optionally atomically (a
// temporary file beside it, synced, then renamed over it), so that a failed save leaves the old
// file's bytes as they were.

#include <filesystem>
#include <span>

#include "cudakit/core/optional_stream.hpp"
#include "cudakit/gds/gds_file.hpp"

namespace cudakit::gds {

// How save_file writes: in place, or atomically; synced or not.
struct SaveOptions {
  bool atomic = false;  // temporary file + fsync + rename (+ fsync of the folder)
  bool fsync = false;   // non-atomic saves: fsync before returning (atomic ones always sync)
};

// Replaces `path` with a file holding each request's bytes at its offset (gaps read as zeros).
// Device memory is copied on `stream` after the work already queued there; the call returns once
// the file is written (and synced and renamed, with `atomic`).
// @param path the file written
// @param requests the buffers (device or host) and their offsets
// @param save atomic replacement and fsync
// @param options how GdsFile moves the bytes
// @param stream the copies' stream for device memory (default: its device's current stream)
// @return the save's report
// @throws IoError naming the path (and the temporary file) for a write, sync or rename that
// failed; with `atomic`, the old file is then untouched and the temporary one removed.
IoReport save_file(const std::filesystem::path& path, std::span<const IoRequest> requests,
                   SaveOptions save = {}, GdsOptions options = GdsOptions::from_environment(),
                   OptionalStream stream = {});
// save_file of tensors (each contiguous, any device) at their offsets.
// @param path the file written
// @param tensors the tensors and their offsets
// @param save atomic replacement and fsync
// @param options how GdsFile moves the bytes
// @param stream the copies' stream for device tensors
// @return the save's report
// @throws InvalidArgumentError for a tensor that is not contiguous.
// @throws IoError as the buffer overload.
IoReport save_file(const std::filesystem::path& path, std::span<const TensorAt> tensors,
                   SaveOptions save = {}, GdsOptions options = GdsOptions::from_environment(),
                   OptionalStream stream = {});

}  // namespace cudakit::gds
