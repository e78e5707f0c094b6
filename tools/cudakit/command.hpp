#pragma once
// Subcommands register themselves, so adding one is adding a file (tools/cudakit/<name>.cpp).

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace cudakit::cli {

// Adds the subcommand's options to `command` and returns what runs it (returning the exit code).
using CommandSetup = std::function<std::function<int()>(CLI::App& command)>;

struct CommandRegistration {
  std::string name;
  std::string description;
  CommandSetup setup;
};

std::vector<CommandRegistration>& command_registry();

struct RegisterCommand {
  RegisterCommand(std::string name, std::string description, CommandSetup setup) {
    command_registry().push_back({std::move(name), std::move(description), std::move(setup)});
  }
};

}  // namespace cudakit::cli
