#pragma once
// Whole-file reads and writes for tests (fixtures, scratch files), failing the test when the
// file cannot be read or written.

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace cudakit::testing {

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << "cannot read " << path;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

inline void write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  ASSERT_TRUE(out) << "cannot write " << path;
}

// `bytes` bytes that differ from offset to offset (a shifted or misplaced chunk shows), the same
// for the same seed.
inline std::string patterned_bytes(std::size_t bytes, unsigned seed) {
  std::string text(bytes, '\0');
  std::uint32_t state = seed * 2654435761u;
  for (auto& c : text) {
    state = state * 1664525u + 1013904223u;
    c = static_cast<char>(state >> 24);
  }
  return text;
}

}  // namespace cudakit::testing
