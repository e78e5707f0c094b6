#include "errors.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <system_error>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/detail/outside_input.hpp"
#include "output_file.hpp"

namespace cudakit::cli {
namespace {

namespace fs = std::filesystem;
using cudakit::detail::concat;

std::string join(const std::vector<std::string>& items, std::string_view separator) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : std::string(separator)) + item;
  return out;
}

// The subcommand the command line selected, or `root` when it selected none.
const CLI::App& selected(const CLI::App& root) {
  const CLI::App* at = &root;
  while (!at->get_subcommands().empty()) at = at->get_subcommands().front();
  return *at;
}

// What is wrong with the command line, in words that follow command_path(root) + ": ".
std::string describe(const CLI::App& root, const CLI::ParseError& error) {
  const CLI::App& at = selected(root);
  const bool wants_subcommand = at.get_require_subcommand_min() > 0 && at.get_subcommands().empty();
  std::vector<std::string> subcommands;
  for (const CLI::App* sub : at.get_subcommands([](const CLI::App*) { return true; }))
    subcommands.push_back(sub->get_name());
  const std::string choices = concat("; the subcommands are ", join(subcommands, ", "));

  if (dynamic_cast<const CLI::ValidationError*>(&error) != nullptr) {
    // "NAME: COMPLAINT", and every complaint of errors.hpp is worded to follow the name.
    std::string text = error.what();
    if (const auto colon = text.find(": "); colon != std::string::npos) text.erase(colon, 1);
    return text;
  }
  if (const std::vector<std::string> extra = root.remaining(true); !extra.empty()) {
    // CLI11 lists positionals first; an unknown option is the likelier mistake, and what follows
    // it is often its value.
    const auto option = std::find_if(extra.begin(), extra.end(),
                                     [](const std::string& arg) { return arg.starts_with('-'); });
    const std::string text = option != extra.end() ? concat("unknown option '", *option, "'")
                             : wants_subcommand    ? concat("unknown subcommand '", extra.front(), "'")
                                                   : concat("unexpected argument '", extra.front(), "'");
    return wants_subcommand ? text + choices : text;
  }
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&error) != nullptr) {
    // "NAME: ..." for an option given no value or given more than once.
    const std::string text = error.what();
    for (const CLI::Option* option : at.get_options()) {
      const std::string name = option->get_name();
      if (name.empty() || text.rfind(name + ":", 0) != 0) continue;
      if (option->count() > 1) return concat(name, " is given ", option->count(), " times; give it once");
      return concat(name, " needs a value (", option->get_type_name(), ")");
    }
  }
  if (dynamic_cast<const CLI::RequiredError*>(&error) != nullptr) {
    if (wants_subcommand) return concat("missing subcommand", choices);
    for (const CLI::Option* option : at.get_options()) {
      if (option->get_required() && option->count() == 0)
        return concat("missing ", option->get_name(), " (", option->get_description(), ")");
    }
  }
  return error.what();
}

// `text` read whole as a T: digits only for an integer (no sign, space or base prefix).
template <class T>
std::optional<T> read_number(const std::string& text) {
  T value{};
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc() || stop != end) return std::nullopt;
  return value;
}

// A check's complaint: what the option takes, then what it was given (quoted as every message
// quotes input: at most ~200 bytes, escaped).
std::string refused(const std::string& takes, const std::string& value) {
  return concat(takes, ", not ", cudakit::detail::quote_input(value));
}

// The shortest text that reads back as `v` ("0.01", "1048576"; a stream would write 1.04858e+06).
std::string shortest(double v) {
  char text[32];
  return std::string(text, std::to_chars(text, text + sizeof text, v).ptr);
}

}  // namespace

CLI::Validator integer_in(std::string kind, std::uint64_t min, std::uint64_t max) {
  return CLI::Validator(
      [takes = concat("takes ", kind, " from ", min, " to ", max), min, max](std::string& value) {
        const std::optional<std::uint64_t> v = read_number<std::uint64_t>(value);
        if (!v || *v < min || *v > max) return refused(takes, value);
        value = std::to_string(*v);
        return std::string();
      },
      concat("[", min, ", ", max, "]"));
}

CLI::Validator number_in(std::string kind, double min, double max) {
  return CLI::Validator(
      [takes = concat("takes ", kind, " from ", shortest(min), " to ", shortest(max)), min,
       max](std::string& value) {
        const std::optional<double> v = read_number<double>(value);
        // The negated test also refuses NaN, which compares false with both bounds.
        if (!v || !(*v >= min && *v <= max)) return refused(takes, value);
        return std::string();
      },
      concat("[", shortest(min), ", ", shortest(max), "]"));
}

CLI::Validator one_of(std::vector<std::string> choices) {
  const std::string listed = join(choices, ", ");
  return CLI::Validator(
      [choices, takes = concat("takes one of ", listed)](std::string& value) {
        for (const std::string& choice : choices) {
          if (value == choice) return std::string();
        }
        return refused(takes, value);
      },
      concat("{", join(choices, ","), "}"));
}

CLI::Validator readable_file() {
  return CLI::Validator(
      [](std::string& path) {
        std::error_code ignored;
        if (fs::is_directory(path, ignored)) return concat("'", path, "' is a folder, not a file");
        std::FILE* file = std::fopen(path.c_str(), "rb");
        if (file == nullptr) {
          const int error = errno;
          return concat("'", path, "' cannot be read: ", std::strerror(error));
        }
        std::fclose(file);
        return std::string();
      },
      "FILE");
}

CLI::Validator writable_file() {
  return CLI::Validator([](std::string& path) { return refuse_output(path); }, "FILE");
}

CLI::Validator folder() {
  return CLI::Validator(
      [](std::string& path) {
        std::error_code ignored;
        if (fs::exists(path, ignored) && !fs::is_directory(path, ignored))
          return concat("takes a folder, not the file '", path, "'");
        return std::string();
      },
      "DIR");
}

void require_distinct_files(std::string_view output_name, const std::string& output,
                            std::string_view input_name, const std::string& input) {
  std::error_code ignored;
  if (fs::equivalent(output, input, ignored)) {
    throw UsageError(concat(output_name, " '", output, "' is ", input_name, " '", input,
                            "' itself; writing it would replace the input, so name another file"));
  }
}

std::string command_path(const CLI::App& root) {
  std::string path = root.get_name();
  for (const CLI::App* at = &root; !at->get_subcommands().empty();) {
    at = at->get_subcommands().front();
    path += " " + at->get_name();
  }
  return path;
}

int report_parse_error(const CLI::App& root, const CLI::ParseError& error) {
  if (error.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return root.exit(error);
  const std::string path = command_path(root);
  std::cerr << path << ": " << describe(root, error) << "\n"
            << "Run '" << path << " --help' for its usage.\n";
  return kUsageError;
}

}  // namespace cudakit::cli
