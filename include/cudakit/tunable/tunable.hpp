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
// @return a copy of the process's options.
[[nodiscard]] TuningOptions options();
// Replaces every option at once. A new filename makes each device read its results file again
// on its next tuned GEMM; `enabled` routes tensor::matmul through TunableOp or not. Cached plans
// are made again on their next use.
// @param options the new options
void set_options(const TuningOptions& options);

// Routes GEMMs (tunable::gemm and tensor::matmul) through TunableOp, or not.
// @param on true to look results up (and tune new GEMMs when tuning is on); false: tensor::matmul
//   bypasses TunableOp and tunable::gemm runs Default
void enable(bool on = true);
// @return whether GEMMs go through TunableOp (the ENABLED option).
[[nodiscard]] bool is_enabled();
// Lets a GEMM without a result be tuned on its first call, or not (it then runs Default).
// @param on the TUNING option's new value
void tuning_enable(bool on = true);
// @return whether GEMMs without a result are tuned (the TUNING option).
[[nodiscard]] bool tuning_is_enabled();
// Records GEMMs that ran without a result in the untuned file, or not.
// @param on the RECORD_UNTUNED option's new value
void record_untuned_enable(bool on = true);
// @return whether untuned GEMMs are recorded (the RECORD_UNTUNED option).
[[nodiscard]] bool record_untuned_is_enabled();
// Limits how long each candidate is timed.
// @param ms the limit in ms (negative counts as 0)
void set_max_tuning_duration(int ms);
// @return the time each candidate is timed for, at most, in ms (MAX_TUNING_DURATION_MS).
[[nodiscard]] int get_max_tuning_duration();
// Limits the rounds of timing.
// @param iterations the limit (below 1 counts as 1)
void set_max_tuning_iterations(int iterations);
// @return the rounds of timing, at most (MAX_TUNING_ITERATIONS).
[[nodiscard]] int get_max_tuning_iterations();
// Compares each candidate's result with Default's and drops those that differ beyond the
// tolerance (Note [GEMM tolerance]), or not.
// @param on the NUMERICAL_CHECK option's new value
void set_numerical_check(bool on);
// Sets the size of the input copies cycled through while timing, so that candidates do not run
// from a warm L2.
// @param mb the size in MiB (-1: twice the L2; below -1 counts as -1)
void set_rotating_buffer_size(int mb);
// @return the rotating buffer's size in MiB (-1: twice the L2) (ROTATING_BUFFER_SIZE).
[[nodiscard]] int get_rotating_buffer_size();
// The results file name pattern ("%d" or the ordinal before the extension: results_file.hpp),
// and whether results are written to it at exit (torch's insert_device_ordinal is always on).
// @param filename the new pattern (empty: no file is read or written)
void set_filename(const std::string& filename);
// @return the results file name pattern (FILENAME).
[[nodiscard]] std::string get_filename();

// Results of `device` (-1: current) as "OpName,ParamsSignature" -> "Solution,Time". The device's
// results file is read first if it has not been.
// @param device the CUDA ordinal (-1: the current device)
// @return a copy of the device's results
// @throws InvalidArgumentError for a device that does not exist.
// @throws CudaError when `device` is -1 and there is no current device.
[[nodiscard]] std::map<std::string, std::string> get_results(int device = -1);
// What this process's results depend on: CUDAKIT_VERSION, CUDA_VERSION, CUBLAS_VERSION,
// CUBLASLT_VERSION, GPU_NAME, COMPUTE_CAPABILITY (of `device`, -1: current).
// @param device the CUDA ordinal (-1: the current device)
// @return the validators, in that order
// @throws InvalidArgumentError for a device that does not exist.
// @throws CudaError when `device` is -1 and there is no current device.
[[nodiscard]] std::vector<Validator> get_validators(int device = -1);
// Reads a results file into `device`'s results (the per-device file name when `filename` is
// empty). Validators that differ are reported in one warning naming them, and the file's
// cuBLASLt solutions are re-checked with cublasLtMatmulAlgoCheck: kept where valid, dropped (to
// be tuned again) where not. Malformed lines are reported with their numbers and skipped.
// Returns false when the file does not exist. Results already held for a key are replaced by
// the file's. Host-synchronous; nothing is enqueued.
// @param filename the file to read (empty: the FILENAME pattern's file for `device`)
// @param device the CUDA ordinal (-1: the current device)
// @return true when the file was read, false when it does not exist
// @throws FileError when it exists but cannot be read (or, after a validator mismatch, cannot be
//   rewritten with the results that still run here).
// @throws InvalidArgumentError when it is beyond the limits of an input file, or for a device
//   that does not exist.
bool read_file(const std::string& filename = "", int device = -1);
// Writes `device`'s validators and results atomically (a temporary file, then rename). A file
// there with other validators is kept as FILE.bak first, with a warning.
// @param filename the file to write (empty: the FILENAME pattern's file for `device`)
// @param device the CUDA ordinal (-1: the current device)
// @throws FileError when it cannot be written.
// @throws InvalidArgumentError for a device that does not exist.
void write_file(const std::string& filename = "", int device = -1);
// Writes every device's results to their files at process exit (on by default, as torch).
// Failures at exit are ignored.
// @param on whether to write at exit
void write_file_on_exit(bool on);
// Tunes every GEMM of an untuned file on the current device, writing results to
// `results_filename` (a per-device pattern; empty: the FILENAME option's, and none when that is
// empty too). Returns how many keys were tuned. A non-empty `results_filename` becomes the
// FILENAME option (set_filename()).
// `progress(done, total)` is called after each key. Malformed lines are reported and skipped,
// and so is a key whose tuning fails (with a warning naming it).
// Stream ordering: each key is tuned by tune() on the current stream of the device, which it
// synchronizes; the call returns when every key has been tuned and written.
// @param untuned_filename a file of untuned keys, as record_untuned writes them
// @param results_filename where results go (see above)
// @param progress called with (keys done, keys in all) after each key; may be empty
// @return how many keys were tuned
// @throws StateError when there is no CUDA device to tune on
// @throws FileError when the untuned file cannot be read or the results cannot be written.
// @throws InvalidArgumentError when the untuned file is a results file or beyond the limits of
//   an input file.
int tune_gemm_in_file(const std::string& untuned_filename, const std::string& results_filename = "",
                      const std::function<void(int, int)>& progress = {});
// The same over `devices` GPUs (0: all), one thread per device, each tuning its share of the keys
// and writing its own per-device file. Returns how many keys were tuned in all.
// Stream ordering: each thread tunes on the current stream of its device and synchronizes it;
// the call returns when every thread has finished. Every device then holds every result.
// @param untuned_filename a file of untuned keys, as record_untuned writes them
// @param devices how many GPUs, from cuda:0 (0 or more than there are: all; 1: the current
//   device only)
// @param results_filename where results go, as for tune_gemm_in_file()
// @param progress called with (keys done, keys in all) after each key, from the tuning threads
//   (one call at a time); may be empty
// @return how many keys were tuned on all devices together
// @throws StateError when there is no CUDA device to tune on
// @throws FileError as tune_gemm_in_file().
// @throws InvalidArgumentError as tune_gemm_in_file().
int mgpu_tune_gemm_in_file(const std::string& untuned_filename, int devices = 0,
                           const std::string& results_filename = "",
                           const std::function<void(int, int)>& progress = {});

// Drops every result of every device (and the cached plans), as torch's tuning context reset.
// Files are left as they are.
void clear_results();

}  // namespace cudakit::tunable
