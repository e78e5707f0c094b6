#pragma once
// Runs the built `cudakit` tool, which sits beside the test binary (in the build's bin/ and in a
// staged bundle alike), with an argument vector (no shell, so no quoting) in a given folder.

#include <spawn.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "support/paths.hpp"

extern char** environ;

namespace cudakit::testing {

struct CliRun {
  int status = -1;  // the exit status; -1 when the tool did not exit normally
  std::string out;
  std::string err;
};

inline std::filesystem::path cudakit_cli_path() {
  return std::filesystem::path(bin_dir()) / "cudakit";
}

namespace detail {
inline std::string read_all(std::FILE* file) {
  std::string text;
  std::rewind(file);
  char chunk[4096];
  for (std::size_t n; (n = std::fread(chunk, 1, sizeof chunk, file)) > 0;) text.append(chunk, n);
  return text;
}
}  // namespace detail

// Runs `cudakit ARGS...` in `dir`; its output goes to anonymous temporary files, so that nothing
// but what the tool itself writes appears in `dir`.
inline CliRun run_cudakit(const std::vector<std::string>& args, const std::filesystem::path& dir) {
  CliRun run;
  const std::string program = cudakit_cli_path().string();
  std::vector<char*> argv{const_cast<char*>(program.c_str())};
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  std::FILE* out = std::tmpfile();
  std::FILE* err = std::tmpfile();
  if (out == nullptr || err == nullptr) {
    run.err = "cannot make temporary files for the tool's output";
  } else {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fileno(out), 1);
    posix_spawn_file_actions_adddup2(&actions, fileno(err), 2);
    posix_spawn_file_actions_addchdir_np(&actions, dir.c_str());
    pid_t pid = 0;
    int wait_status = 0;
    if (posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(), environ) == 0 &&
        waitpid(pid, &wait_status, 0) == pid && WIFEXITED(wait_status)) {
      run.status = WEXITSTATUS(wait_status);
    }
    posix_spawn_file_actions_destroy(&actions);
    run.out = detail::read_all(out);
    run.err = detail::read_all(err);
  }
  if (out != nullptr) std::fclose(out);
  if (err != nullptr) std::fclose(err);
  return run;
}

}  // namespace cudakit::testing
