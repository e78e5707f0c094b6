// `cudakit tune UNTUNED.csv -o RESULTS.csv`: offline tuning. Tunes every GEMM a run recorded as
// untuned (CUDAKIT_TUNABLEOP_RECORD_UNTUNED=1) and writes a results file that later runs load
// (CUDAKIT_TUNABLEOP_FILENAME). With --devices, the GPUs split the keys, one thread each.
// A progress bar with the time left goes to stderr.

#include <algorithm>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>

#include "command.hpp"
#include "cudakit/core/detail/text_file.hpp"
#include "cudakit/core/device.hpp"
#include "cudakit/tunable/results_file.hpp"
#include "cudakit/tunable/tunable.hpp"
#include "errors.hpp"
#include "output_file.hpp"

namespace cudakit::cli {
namespace {

struct TuneOptions {
  std::string untuned;
  std::string output;
  int devices = 1;
  int max_shape_ms = 2000;
};

void draw_progress(int done, int total, double elapsed_s) {
  constexpr int kWidth = 30;
  const int filled = total ? done * kWidth / total : kWidth;
  const double left = done ? elapsed_s / done * (total - done) : 0;
  std::fprintf(stderr, "\r[%s%s] %d/%d GEMMs, %.1f s, %.1f s left ", std::string(filled, '#').c_str(),
               std::string(kWidth - filled, '.').c_str(), done, total, elapsed_s, left);
  if (done == total) std::fprintf(stderr, "\n");
  std::fflush(stderr);
}

int run_tune(const TuneOptions& o) {
  require_distinct_files("--output", o.output, "UNTUNED", o.untuned);
  // Made first: an output that cannot be written fails before the tuning, and an interrupted
  // tuning leaves nothing behind (Note [Writing outputs]).
  OutputFile out(o.output);
  const tunable::UntunedFileContents contents =
      tunable::parse_untuned_file(cudakit::detail::read_text_file(o.untuned, "read_text_file"));
  for (const std::string& problem : contents.problems) std::cerr << o.untuned << ": " << problem << " (skipped)\n";
  if (contents.keys.empty()) throw std::runtime_error(o.untuned + " names no GEMM to tune");
  if (!is_available()) throw std::runtime_error("tuning needs a CUDA device and this machine has none");
  if (o.devices > device_count()) {
    throw UsageError("--devices " + std::to_string(o.devices) + " asks for more GPUs than this machine's " +
                     std::to_string(device_count()) + " (0 takes them all)");
  }
  tunable::TuningOptions options = tunable::options();
  options.enabled = true;
  options.tuning = true;
  options.filename = "";  // results go to --output only, written once at the end
  options.max_shape_tuning_ms = o.max_shape_ms;
  tunable::set_options(options);
  tunable::write_file_on_exit(false);
  const auto start = std::chrono::steady_clock::now();
  draw_progress(0, static_cast<int>(contents.keys.size()), 0);
  const int tuned = tunable::mgpu_tune_gemm_in_file(o.untuned, o.devices, "", [&](int done, int total) {
    draw_progress(done, total, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  });
  const int device = o.devices == 1 ? current_device() : 0;
  if (out.is_standard_output()) {
    // The library writes results files only; standard output gets a copy of one.
    const std::string temporary =
        (std::filesystem::temp_directory_path() / ("cudakit-tune-" + std::to_string(::getpid()) + ".csv")).string();
    tunable::write_file(temporary, device);
    std::string text;
    try {
      text = cudakit::detail::read_text_file(temporary, "read_text_file");
    } catch (...) {
      std::filesystem::remove(temporary);
      throw;
    }
    std::filesystem::remove(temporary);
    out.write(text);
  } else {
    tunable::write_file(out.temp_path(), device);
  }
  out.commit();
  (o.output == kStandardOutput ? std::cerr : std::cout) << "tuned " << tuned << " of " << contents.keys.size() << " GEMMs; results in "
            << (o.output == kStandardOutput ? "standard output" : o.output) << "\n";
  return tuned == static_cast<int>(contents.keys.size()) ? 0 : 1;
}

const RegisterCommand kTune(
    "tune", "tune the GEMMs of an untuned file (record_untuned) and write a TunableOp results file",
    [](CLI::App& command) -> std::function<int()> {
      auto options = std::make_shared<TuneOptions>();
      command.add_option("UNTUNED", options->untuned, "untuned file (OpName,ParamsSignature lines)")
          ->required()
          ->check(readable_file());
      command.add_option("-o,--output", options->output, "results file to write (- for standard output)")->required()->check(writable_file());
      command.add_option("--devices", options->devices, "GPUs that split the work (0: all)")
          ->capture_default_str()
          ->transform(integer_in("a device count", 0, 1024));
      command.add_option("--max-shape-ms", options->max_shape_ms, "tuning time per GEMM, at most")
          ->capture_default_str()
          ->transform(integer_in("milliseconds", 1, 600000));
      return [options] { return run_tune(*options); };
    });

}  // namespace
}  // namespace cudakit::cli
