#pragma once
// @brief torch.cuda.tunable's functions, for cudakit's TunableOp. The state they set is per process
// (shared by all threads, as torch's tuning context); results are kept per device. Every
// function is thread-safe. The initial settings come from CUDAKIT_TUNABLEOP_* (options.hpp).

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "cudakit/tunable/options.hpp"
#include "cudakit/tunable/results_file.hpp"

namespace cudakit::tunable {

// The current options (a copy) and replacing them all at once.
[[nodiscard]] TuningOptions options();
void set_options(const TuningOptions& options);

// Routes GEMMs (tunable::gemm and tensor::matmul) through TunableOp, or not.
void enable(bool on = true);
[[nodiscard]] bool is_enabled();
void tuning_enable(bool on = true);
[[nodiscard]] bool tuning_is_enabled();
void record_untuned_enable(bool on = true);
[[nodiscard]] bool record_untuned_is_enabled();
void set_max_tuning_duration(int ms);
[[nodiscard]] int get_max_tuning_duration();
void set_max_tuning_iterations(int iterations);
[[nodiscard]] int get_max_tuning_iterations();
void set_numerical_check(bool on);
void set_rotating_buffer_size(int mb);
[[nodiscard]] int get_rotating_buffer_size();
// The results file name pattern ("%d" or the ordinal before the extension: results_file.hpp),
// and whether results are written to it at exit (torch's insert_device_ordinal is always on).
void set_filename(const std::string& filename);
[[nodiscard]] std::string get_filename();

// Results of `device` (-1: current) as "OpName,ParamsSignature" -> "Solution,Time".
[[nodiscard]] std::map<std::string, std::string> get_results(int device = -1);
// What this process's results depend on: CUDAKIT_VERSION, CUDA_VERSION, CUBLAS_VERSION,
// CUBLASLT_VERSION, GPU_NAME, COMPUTE_CAPABILITY (of `device`, -1: current).
[[nodiscard]] std::vector<Validator> get_validators(int device = -1);
// Reads a results file into `device`'s results (the per-device file name when `filename` is
// empty). Validators that differ are reported in one warning naming them, and the file's
// cuBLASLt solutions are re-checked with cublasLtMatmulAlgoCheck: kept where valid, dropped (to
// be tuned again) where not. Malformed lines are reported with their numbers and skipped.
// Returns false when the file does not exist. @throws InvalidArgumentError when it cannot be read.
bool read_file(const std::string& filename = "", int device = -1);
// Writes `device`'s validators and results atomically (a temporary file, then rename). A file
// there with other validators is kept as FILE.bak first, with a warning.
// @throws InvalidArgumentError when it cannot be written.
void write_file(const std::string& filename = "", int device = -1);
// Writes every device's results to their files at process exit (on by default, as torch).
void write_file_on_exit(bool on);
// Tunes every GEMM of an untuned file on the current device, writing results to
// `results_filename` (a per-device pattern; empty: the FILENAME option's, and none when that is
// empty too). Returns how many keys were tuned.
// `progress(done, total)` is called after each key. Malformed lines are reported and skipped.
// Stream ordering: each key is tuned by tune() on the current stream of the device, which it
// synchronizes; the call returns when every key has been tuned and written.
// @param untuned_filename a file of untuned keys, as record_untuned writes them
// @param results_filename where results go (see above)
// @param progress called with (keys done, keys in all) after each key; may be empty
// @return how many keys were tuned
// @throws StateError when there is no CUDA device to tune on
int tune_gemm_in_file(const std::string& untuned_filename, const std::string& results_filename = "",
                      const std::function<void(int, int)>& progress = {});
// The same over `devices` GPUs (0: all), one thread per device, each tuning its share of the keys
// and writing its own per-device file. Returns how many keys were tuned in all.
int mgpu_tune_gemm_in_file(const std::string& untuned_filename, int devices = 0,
                           const std::string& results_filename = "",
                           const std::function<void(int, int)>& progress = {});

// Drops every result of every device (and the cached plans), as torch's tuning context reset.
void clear_results();

}  // namespace cudakit::tunable
