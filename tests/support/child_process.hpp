#pragma once
// Runs this test binary again, as a child process, on a few of its own tests: for what is
// process-wide and chosen once (the device allocator's backend), so that the rest of the suite
// keeps the default. A child test skips unless the variable its parent sets is there.

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "support/paths.hpp"

namespace cudakit::testing {

// The variable that says which child a test runs as ("" in the suite itself).
inline constexpr const char* kChildVariable = "CUDAKIT_TEST_CHILD";
inline std::string child_mode() { return env_or(kChildVariable, ""); }

struct ChildResult {
  int exit_code = -1;  // -1: did not exit normally
  std::string output;  // stdout and stderr
  // gtest's summary says every selected test ran and passed (none skipped).
  [[nodiscard]] bool passed() const {
    return exit_code == 0 && output.find("[  PASSED  ]") != std::string::npos &&
           output.find("[  SKIPPED ]") == std::string::npos;
  }
};

// This binary with --gtest_filter=`filter`, with `env` ("NAME=value") added to the environment.
inline ChildResult run_this_binary(const std::string& filter, const std::vector<std::string>& env) {
  std::string command = "env";
  for (const std::string& e : env) command += " '" + e + "'";
  command += " '" + std::filesystem::read_symlink("/proc/self/exe").string() + "' '--gtest_filter=" + filter +
             "' 2>&1";
  ChildResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return result;
  std::array<char, 4096> buffer{};
  while (const std::size_t n = std::fread(buffer.data(), 1, buffer.size(), pipe)) result.output.append(buffer.data(), n);
  const int status = pclose(pipe);
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  return result;
}

}  // namespace cudakit::testing
