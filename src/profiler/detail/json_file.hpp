#pragma once
// Whole-file reads and writes for the profiler's JSON files, failing with the path and errno.

#include <string>

namespace cudakit::profiler::detail {

// @throws InvalidArgumentError "cannot read PATH: reason" (api = `api`).
std::string read_text_file(const std::string& path, const char* api);
// @throws InvalidArgumentError "cannot write PATH: reason" (api = `api`).
void write_text_file(const std::string& path, const std::string& text, const char* api);

}  // namespace cudakit::profiler::detail
