#pragma once
// The tool's errors in words, in one place. Every check says what its option takes and
// what it was given; a failed one reads
//   cudakit rng: --n takes a count from 1 to 268435456, not '-1'
// and the tool exits with kUsageError. CLI11 reports a failed check as "NAME: COMPLAINT", so the
// complaints below are worded to follow the option's name, and report_parse_error drops the colon.

#include <CLI/CLI.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace cudakit::cli {

// The exit status of a command line that cannot run as written (the usual 2 of Unix tools);
// failures while running exit with 1.
inline constexpr int kUsageError = 2;
// The exit status of a command that could not do its work (bad input, a failed write, no device).
inline constexpr int kFailure = 1;

// Options that conflict, found after parsing (two options naming one file): exits kUsageError
// with the message, prefixed by the command like every other error.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// An integer from `min` to `max` in decimal digits; `kind` names it in the complaint ("a count").
// CLI11 alone reads "010" as octal and "-1" as 2^64-1 for an unsigned option, so the check passes
// the value on rewritten in plain decimal: attach it with ->transform(), since ->check() keeps
// the text as given.
CLI::Validator integer_in(std::string kind, std::uint64_t min, std::uint64_t max);
// A finite number from `min` to `max`.
CLI::Validator number_in(std::string kind, double min, double max);
// One of `choices`, exactly.
CLI::Validator one_of(std::vector<std::string> choices);
// A file that exists and can be opened for reading.
CLI::Validator readable_file();
// A file that can be created or replaced, or "-" for standard output (refuse_output in
// output_file.hpp says which).
CLI::Validator writable_file();
// A folder, or a path where one can be made: not an existing file.
CLI::Validator folder();

// Throws UsageError when `output` and `input` are one file (writing the output would destroy the
// input before or while it is read). The names are the options' ("-o", "TRACE").
void require_distinct_files(std::string_view output_name, const std::string& output,
                            std::string_view input_name, const std::string& input);

// "cudakit", "cudakit trace merge": the deepest subcommand the command line selected.
std::string command_path(const CLI::App& root);
// Help and --version as CLI11 prints them; every other parse error as one line naming the
// command and what was wrong, then where the usage is. Returns the exit status.
int report_parse_error(const CLI::App& root, const CLI::ParseError& error);

}  // namespace cudakit::cli
