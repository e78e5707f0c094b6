#pragma once
// Children of this test binary that act as the ranks of a store test: each is a real process,
// started with fork/exec (execve right after fork, so the parent's threads do not matter), that
// runs one child test and exits; their output is kept for the failure message.

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/child_process.hpp"

namespace cudakit::testing {

struct RankProcess {
  pid_t pid = -1;
  std::string output_file;
};

// Starts this binary on `filter` with `env` added (plus CUDAKIT_TEST_CHILD=`mode`), its output
// to `output_file`.
inline RankProcess start_rank_process(const std::string& filter, const std::string& mode,
                                      const std::vector<std::string>& env, const std::string& output_file) {
  const std::string exe = std::filesystem::read_symlink("/proc/self/exe").string();
  std::vector<std::string> args = {exe, "--gtest_filter=" + filter};
  std::vector<std::string> environment;
  for (char** e = environ; *e != nullptr; ++e) environment.emplace_back(*e);
  environment.push_back(std::string(kChildVariable) + "=" + mode);
  environment.insert(environment.end(), env.begin(), env.end());
  std::vector<char*> argv, envp;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : environment) envp.push_back(e.data());
  envp.push_back(nullptr);
  const int out = ::open(output_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out, 1);
    ::dup2(out, 2);
    ::execve(exe.c_str(), argv.data(), envp.data());
    ::_exit(127);
  }
  ::close(out);
  return RankProcess{pid, output_file};
}

struct RankResult {
  int exit_code = -1;  // -1: killed (past the deadline) or crashed
  std::string output;
  [[nodiscard]] bool passed() const {
    return exit_code == 0 && output.find("[  PASSED  ] 1 test") != std::string::npos &&
           output.find("[  SKIPPED ]") == std::string::npos;
  }
};

// Waits for every child up to `timeout` in all, then kills what is left.
inline std::vector<RankResult> wait_rank_processes(const std::vector<RankProcess>& processes,
                                                   std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::vector<RankResult> results(processes.size());
  std::vector<bool> done(processes.size(), false);
  std::size_t left = processes.size();
  while (left > 0) {
    for (std::size_t i = 0; i < processes.size(); ++i) {
      if (done[i]) continue;
      int status = 0;
      const pid_t r = ::waitpid(processes[i].pid, &status, std::chrono::steady_clock::now() >= deadline ? 0 : WNOHANG);
      if (r == 0) continue;
      if (r == processes[i].pid && WIFEXITED(status)) results[i].exit_code = WEXITSTATUS(status);
      done[i] = true;
      --left;
    }
    if (left == 0) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      for (std::size_t i = 0; i < processes.size(); ++i)
        if (!done[i]) ::kill(processes[i].pid, SIGKILL);
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  for (std::size_t i = 0; i < processes.size(); ++i) {
    std::ifstream in(processes[i].output_file);
    std::ostringstream text;
    text << in.rdbuf();
    results[i].output = text.str();
  }
  return results;
}

}  // namespace cudakit::testing
