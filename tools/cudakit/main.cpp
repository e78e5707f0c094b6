// cudakit: the command-line tool. Each subcommand lives in its own file and registers itself.

#include <exception>
#include <iostream>
#include <memory>
#include <new>
#include <string>

#include "command.hpp"
#include "cudakit/core/error.hpp"
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
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return report_parse_error(app, e);
  }
  // Every failure is told as "cudakit SUBCOMMAND: what went wrong".
  const std::string where = command_path(app);
  try {
    return run ? run() : 0;
  } catch (const UsageError& e) {
    std::cerr << where << ": " << e.what() << "\n";
    return kUsageError;
  } catch (const cudakit::Error& e) {
    std::cerr << where << ": " << message_of(e) << "\n";
  } catch (const std::bad_alloc&) {
    std::cerr << where << ": out of host memory\n";
  } catch (const std::exception& e) {
    std::cerr << where << ": " << e.what() << "\n";
  }
  return 1;
}
