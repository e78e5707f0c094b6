#pragma once
// @brief The results file, in PyTorch TunableOp's CSV grammar:
//   Validator,CUDAKIT_VERSION,0.1.0          (one line per validator: what the results depend on)
//   ...
//   GemmTunableOp_BFloat16_TN,tn_4096_16_4096_ld_...,Lt_a66_t..._g0,0.0123   (OpName,ParamsSignature,Solution,Time in ms)
// and the untuned file that record_untuned writes: OpName,ParamsSignature lines.
// Parsing never throws for a bad line: it is reported ("line 7: ...") and skipped, so a file
// damaged in one place keeps its other results.

#include <string>
#include <string_view>
#include <vector>

#include "cudakit/tunable/gemm_key.hpp"
#include "cudakit/tunable/solution.hpp"

namespace cudakit::tunable {

// One thing the results depend on, as a "Validator,NAME,VALUE" line records it.
struct Validator {
  std::string name;   // "CUDAKIT_VERSION", "GPU_NAME", ...
  std::string value;  // its value where the results were tuned
  // Whether both are the same validator with the same value.
  // @return true when name and value are equal.
  bool operator==(const Validator&) const = default;
};

// One tuned GEMM: a results file's "OpName,ParamsSignature,Solution,Time" line.
struct TuningResult {
  GemmKey key;         // the GEMM (OpName and ParamsSignature)
  Solution solution;   // the implementation chosen for it
  double time_ms = 0;  // its median time when tuned, in ms
};

// What parse_results_file() read.
struct ResultsFileContents {
  std::vector<Validator> validators;  // in file order
  std::vector<TuningResult> results;  // in file order; a later line for the same key wins
  // "line 7: ..." for each line that was skipped, the first 20 of them, then "N more lines with
  // problems"; each quotes at most a few hundred bytes of its line.
  std::vector<std::string> problems;
};

// Parses a results file's text. Lines may end in \r\n; empty lines are ignored. A field past the
// fourth (newer torch versions add one) is ignored. Never throws for a bad line.
// @param text the file's whole text
// @return the validators, the results and the problems of the skipped lines.
[[nodiscard]] ResultsFileContents parse_results_file(std::string_view text);
// The text of a results file: validators, then one line per result.
// @param validators the Validator lines, in order
// @param results the result lines, in order
// @return the file's text, each line ending in a newline.
[[nodiscard]] std::string format_results_file(const std::vector<Validator>& validators,
                                              const std::vector<TuningResult>& results);
// One result line, without the newline.
// @param result the result
// @return "OpName,ParamsSignature,Solution,Time".
[[nodiscard]] std::string format_result_line(const TuningResult& result);

// A validator that differs between a file and this process.
struct ValidatorMismatch {
  std::string name;     // the validator's name
  std::string in_file;  // empty: the file lacks it
  std::string current;  // empty: this process does not have it
};
// Whether a results file was written by torch's TunableOp (its validators, PT_VERSION among
// them, and none of cudakit's): cudakit leaves such a file to torch (See Note [Results files]).
// @param contents a parsed results file
// @return true for torch's validators without CUDAKIT_VERSION.
[[nodiscard]] bool written_by_torch(const ResultsFileContents& contents);
// The validators of `file` that differ from `current` (or that either side lacks).
// @param file the validators a results file holds
// @param current this process's validators (get_validators())
// @return one mismatch per differing name (none when the two agree).
[[nodiscard]] std::vector<ValidatorMismatch> compare_validators(const std::vector<Validator>& file,
                                                                const std::vector<Validator>& current);
// The mismatches as text for one warning.
// @param mismatches what compare_validators() found
// @return "CUBLASLT_VERSION: file 130000, here 130100; GPU_NAME: ...".
[[nodiscard]] std::string describe_mismatches(const std::vector<ValidatorMismatch>& mismatches);

// What parse_untuned_file() read.
struct UntunedFileContents {
  std::vector<GemmKey> keys;  // each key once, in first-seen order
  std::vector<std::string> problems;  // as ResultsFileContents's
};
// Parses an untuned file: OpName,ParamsSignature lines (further fields ignored). A bad line is
// reported in `problems` and skipped.
// @param text the file's whole text
// @return the keys, each once, and the problems of the skipped lines
// @throws InvalidArgumentError for a results file (one with Validator lines).
[[nodiscard]] UntunedFileContents parse_untuned_file(std::string_view text);
// "OpName,ParamsSignature" for an untuned file, without the newline.
// @param key the untuned GEMM
// @return the line's text.
[[nodiscard]] std::string format_untuned_line(const GemmKey& key);

// The per-device file name: "%d" replaced by the ordinal, or, without "%d", the ordinal put before
// the extension ("results.csv" -> "results0.csv"), as torch does.
// @param pattern a file name, with or without "%d"
// @param device the CUDA ordinal
// @return the device's file name (the ordinal appended to a name without an extension).
[[nodiscard]] std::string device_filename(std::string_view pattern, int device);

}  // namespace cudakit::tunable
