#pragma once
// Whole text files: the quiet read of the host's /proc and cgroup figures, and the reads and
// writes of the JSON files (kernel annotations, traces), which fail with the path and errno.

#include <optional>
#include <string>

namespace cudakit::detail {

// The whole text of `path`; nullopt when it cannot be opened or read, with the errno that says
// why in *error when `error` is given.
[[nodiscard]] std::optional<std::string> try_read_text_file(const std::string& path, int* error = nullptr);
// A file a user names, within the limits of read_input_file (outside_input.hpp).
// @throws FileError "cannot read PATH: reason", InvalidArgumentError "PATH: what is wrong".
[[nodiscard]] std::string read_text_file(const std::string& path, const char* api);
// Replaces `path` as write_text_file_atomically does.
// @throws FileError "cannot write PATH: reason" (api = `api`).
void write_text_file(const std::string& path, const std::string& text, const char* api);

}  // namespace cudakit::detail

namespace cudakit::detail {
// Writes `text` to a temporary file beside `path` (its name unique to the call, so that threads
// and processes writing the same path never share one) and renames it over `path`, so that a
// reader sees the old file or the new one, never a part; a link is followed, a device or pipe
// written in place, a folder or read-only file refused (See Note [Replacing a file]). Empty on success, else what failed:
// "cannot create|write TEMPORARY: reason" or "cannot move TEMPORARY to PATH: reason"; the
// temporary file is removed.
[[nodiscard]] std::string try_write_text_file_atomically(const std::string& path, const std::string& text);
// The same. @throws FileError with that message and errno (api = `api`).
void write_text_file_atomically(const std::string& path, const std::string& text, const char* api);
// Appends `text` to `path` (created when missing). @throws FileError as write_text_file.
void append_text_file(const std::string& path, const std::string& text, const char* api);
}  // namespace cudakit::detail
