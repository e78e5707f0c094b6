// cudakit: the command-line tool. Each subcommand lives in its own file and registers itself.

#include <exception>
#include <iostream>
#include <memory>

#include "command.hpp"
#include "cudakit/version.hpp"
#include "cudakit/core/error.hpp"

namespace cudakit::cli {
std::vector<CommandRegistration>& command_registry() {
  static std::vector<CommandRegistration> registry;
  return registry;
}
}  // namespace cudakit::cli

int main(int argc, char** argv) {
  CLI::App app{"cudakit " CUDAKIT_VERSION_STRING ": torch.cuda's runtime for C++ programs"};
  app.set_version_flag("--version", CUDAKIT_VERSION_STRING);
  app.require_subcommand(1);
  std::function<int()> run;
  for (auto& registration : cudakit::cli::command_registry()) {
    CLI::App* command = app.add_subcommand(registration.name, registration.description);
    auto runner = std::make_shared<std::function<int()>>();
    *runner = registration.setup(*command);
    command->callback([&run, runner] { run = *runner; });
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    return run ? run() : 0;
  } catch (const cudakit::Error& e) {
    std::cerr << "cudakit: " << e.what() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "cudakit: " << e.what() << "\n";
  }
  return 1;
}
