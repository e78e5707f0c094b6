// cudakit: the command-line tool. Each subcommand lives in its own file and registers itself.

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <memory>
#include <new>
#include <string>

#include "command.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/core/log.hpp"
#include "cudakit/version.hpp"
#include "errors.hpp"

namespace cudakit::cli {
std::vector<CommandRegistration>& command_registry() {
  static std::vector<CommandRegistration> registry;
  return registry;
}

}  // namespace cudakit::cli

int main(int argc, char** argv) {
  using namespace cudakit::cli;
  CLI::App app{"cudakit " CUDAKIT_VERSION_STRING ": torch.cuda's runtime for C++ programs", "cudakit"};
  app.set_version_flag("--version", CUDAKIT_VERSION_STRING);
  app.require_subcommand(1);
  std::function<int()> run;
  for (auto& registration : command_registry()) {
    CLI::App* command = app.add_subcommand(registration.name, registration.description);
    auto runner = std::make_shared<std::function<int()>>();
    *runner = registration.setup(*command);
    command->callback([&run, runner] { run = *runner; });
  }
  // A file-size limit (`ulimit -f`) makes a write fail like a full disk, rather than kill the tool
  // with SIGXFSZ mid-write; the failure is then told (Note [Writing outputs]).
  std::signal(SIGXFSZ, SIG_IGN);
  // A CUDAKIT_LOG_LEVEL that is no level is reported now, not at the first record (which a
  // command that logs nothing never writes).
  (void)cudakit::log_level();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return report_parse_error(app, e);
  }
  // Every failure is told as "cudakit SUBCOMMAND: what went wrong".
  const std::string where = command_path(app);
  int status = kFailure;
  bool told = true;  // a failure was reported already
  try {
    status = run ? run() : 0;
    told = false;
  } catch (const UsageError& e) {
    std::cerr << where << ": " << e.what() << "\n";
    return kUsageError;
  } catch (const std::bad_alloc& e) {
    // cudakit's OutOfMemoryError is a bad_alloc with a report; the standard one says nothing.
    std::cerr << where << ": "
              << (dynamic_cast<const cudakit::Error*>(&e) ? e.what() : "out of host memory") << "\n";
  } catch (const std::exception& e) {
    std::cerr << where << ": " << e.what() << "\n";
  }
  // What the command printed must have reached standard output (a full disk, /dev/full).
  errno = 0;
  if (!std::cout.flush() || std::fflush(stdout) != 0 || std::ferror(stdout) != 0) {
    const int error = errno;
    if (!told) {
      std::cerr << where << ": cannot write to standard output"
                << (error != 0 ? std::string(": ") + std::strerror(error) : std::string()) << "\n";
    }
    return kFailure;
  }
  return status;
}
