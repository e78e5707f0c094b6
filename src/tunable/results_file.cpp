#include "cudakit/tunable/results_file.hpp"

#include <charconv>
#include <cmath>
#include <set>
#include <string>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/error.hpp"

namespace cudakit::tunable {
namespace {

// Splits a line on commas.
std::vector<std::string_view> split_fields(std::string_view line) {
  std::vector<std::string_view> fields;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = line.find(',', start);
    fields.push_back(line.substr(start, comma == std::string_view::npos ? comma : comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return fields;
}

// Calls line_fn(line_number, line) for each non-empty line, \r\n or \n terminated.
template <class LineFn>
void for_each_line(std::string_view text, LineFn&& line_fn) {
  std::size_t number = 0;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    ++number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!line.empty()) line_fn(number, line);
  }
}

// A problem for a message: its line, and at most a few hundred bytes of what the parser said
// (which quotes the line).
std::string problem(std::size_t line, std::string_view what) {
  constexpr std::size_t kMost = 400;
  if (what.size() <= kMost) return cudakit::detail::concat("line ", line, ": ", what);
  return cudakit::detail::concat("line ", line, ": ", what.substr(0, kMost), "... (", what.size(), " bytes)");
}

// A file's problems: the first few told one by one, the rest counted, so that a file of garbage
// is not echoed line by line.
class Problems {
 public:
  explicit Problems(std::vector<std::string>& out) : out_(out) {}
  void add(std::size_t line, std::string_view what) {
    if (out_.size() < kMost) out_.push_back(problem(line, what));
    else ++more_;
  }
  void finish() {
    if (more_ > 0) out_.push_back(cudakit::detail::concat(more_, " more lines with problems"));
  }

 private:
  static constexpr std::size_t kMost = 20;
  std::vector<std::string>& out_;
  std::size_t more_ = 0;
};

// The validator of `list` named `name`, or nullptr.
const Validator* find_validator(const std::vector<Validator>& list, std::string_view name) {
  for (const Validator& v : list) {
    if (v.name == name) return &v;
  }
  return nullptr;
}

}  // namespace

ResultsFileContents parse_results_file(std::string_view text) {
  ResultsFileContents contents;
  Problems problems(contents.problems);
  for_each_line(text, [&](std::size_t number, std::string_view line) {
    const std::vector<std::string_view> fields = split_fields(line);
    if (fields[0] == "Validator") {
      if (fields.size() < 3 || fields[1].empty()) {
        problems.add(number, "a Validator line needs Validator,NAME,VALUE");
        return;
      }
      // The value is the rest of the line (it may hold commas).
      const std::size_t value_start = fields[0].size() + fields[1].size() + 2;
      contents.validators.push_back({std::string(fields[1]), std::string(line.substr(value_start))});
      return;
    }
    if (fields.size() < 4) {
      problems.add(number, cudakit::detail::concat(
          "expected OpName,ParamsSignature,Solution,Time, found ", fields.size(), " field(s)"));
      return;
    }
    try {
      TuningResult result;
      result.key = GemmKey::parse(fields[0], fields[1]);
      result.solution = Solution::parse(fields[2]);
      double time = 0;
      const auto [end, ec] = std::from_chars(fields[3].data(), fields[3].data() + fields[3].size(), time);
      if (ec != std::errc() || end != fields[3].data() + fields[3].size() || !std::isfinite(time) || time < 0) {
        problems.add(number, cudakit::detail::concat("time \"", fields[3],
                                                                   "\" is not a non-negative number of ms"));
        return;
      }
      result.time_ms = time;
      contents.results.push_back(std::move(result));
    } catch (const InvalidArgumentError& e) {
      problems.add(number, e.what());
    }
  });
  problems.finish();
  return contents;
}

std::string format_result_line(const TuningResult& result) {
  char time[32];
  const auto [end, ec] = std::to_chars(time, time + sizeof time, result.time_ms);
  (void)ec;
  return cudakit::detail::concat(result.key.op_name(), ',', result.key.signature(), ',',
                        result.solution.name(), ',', std::string_view(time, static_cast<std::size_t>(end - time)));
}

std::string format_results_file(const std::vector<Validator>& validators,
                                const std::vector<TuningResult>& results) {
  std::string text;
  for (const Validator& v : validators) text += cudakit::detail::concat("Validator,", v.name, ',', v.value, '\n');
  for (const TuningResult& r : results) {
    text += format_result_line(r);
    text += '\n';
  }
  return text;
}

bool written_by_torch(const ResultsFileContents& contents) {
  return find_validator(contents.validators, "PT_VERSION") && !find_validator(contents.validators, "CUDAKIT_VERSION");
}

std::vector<ValidatorMismatch> compare_validators(const std::vector<Validator>& file,
                                                  const std::vector<Validator>& current) {
  std::vector<ValidatorMismatch> mismatches;
  for (const Validator& here : current) {
    const Validator* there = find_validator(file, here.name);
    if (!there || there->value != here.value) {
      mismatches.push_back({here.name, there ? there->value : "", here.value});
    }
  }
  for (const Validator& there : file) {
    if (!find_validator(current, there.name)) mismatches.push_back({there.name, there.value, ""});
  }
  return mismatches;
}

std::string describe_mismatches(const std::vector<ValidatorMismatch>& mismatches) {
  std::string text;
  for (const ValidatorMismatch& m : mismatches) {
    if (!text.empty()) text += "; ";
    text += cudakit::detail::concat(m.name, ": file ", m.in_file.empty() ? "(none)" : m.in_file, ", here ",
                           m.current.empty() ? "(none)" : m.current);
  }
  return text;
}

UntunedFileContents parse_untuned_file(std::string_view text) {
  UntunedFileContents contents;
  Problems problems(contents.problems);
  std::set<std::string> seen;
  for_each_line(text, [&](std::size_t number, std::string_view line) {
    const std::vector<std::string_view> fields = split_fields(line);
    // Its GEMM lines would read as untuned ones; a run would then tune what it had tuned.
    if (fields[0] == "Validator") {
      throw InvalidArgumentError(
          "parse_untuned_file",
          cudakit::detail::concat("line ", number, " is a Validator line: this is a results file "
                                  "(CUDAKIT_TUNABLEOP_FILENAME), not an untuned file "
                                  "(CUDAKIT_TUNABLEOP_UNTUNED_FILENAME, OpName,ParamsSignature lines)"));
    }
    if (fields.size() < 2) {
      problems.add(number, "expected OpName,ParamsSignature");
      return;
    }
    try {
      GemmKey key = GemmKey::parse(fields[0], fields[1]);
      if (seen.insert(cudakit::detail::concat(fields[0], ',', fields[1])).second) contents.keys.push_back(key);
    } catch (const InvalidArgumentError& e) {
      problems.add(number, e.what());
    }
  });
  problems.finish();
  return contents;
}

std::string format_untuned_line(const GemmKey& key) {
  return cudakit::detail::concat(key.op_name(), ',', key.signature());
}

std::string device_filename(std::string_view pattern, int device) {
  std::string name(pattern);
  if (const std::size_t at = name.find("%d"); at != std::string::npos) {
    return name.replace(at, 2, std::to_string(device));
  }
  const std::size_t slash = name.rfind('/');
  const std::size_t dot = name.rfind('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash) || dot == 0 ||
      (slash != std::string::npos && dot == slash + 1)) {
    return name + std::to_string(device);
  }
  return name.insert(dot, std::to_string(device));
}

}  // namespace cudakit::tunable
