#include "tunable/detail/results_store.hpp"

#include <cublasLt.h>
#include <cublas_v2.h>

#include <algorithm>
#include <deque>
#include <memory>
#include <set>
#include <thread>
#include <unordered_map>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/detail/text_file.hpp"
#include "cudakit/core/device.hpp"
#include "cudakit/core/device_guard.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/core/log.hpp"
#include "cudakit/core/runtime_info.hpp"
#include "cudakit/tunable/gemm.hpp"
#include "cudakit/tunable/tunable.hpp"
#include "cudakit/version.hpp"
#include "tunable/detail/gemm_runner.hpp"

namespace cudakit::tunable {

// Note [Results files]
// One results file per device (the FILENAME pattern with the ordinal), in torch's grammar
// (results_file.hpp), read on a device's first tuned GEMM and appended to as each new result is
// found, so that a process that dies keeps what it tuned. Another process (another rank) that
// reads the file runs the same solutions: a Solution names a cuBLASLt configuration, rebuilt and
// checked (cublasLtMatmulAlgoCheck) wherever it is read, never an index into a heuristic's
// list that may come out differently.
// A file whose validators differ from this process's (another cuBLASLt, another driver, another
// GPU) is neither trusted nor thrown away: one warning names what differs, every cuBLASLt entry is
// re-checked here and kept when it still runs, and the others are tuned again when met. The file
// is then rewritten (atomically: temporary file and rename) with this process's validators and
// the entries kept, the old one saved beside it as FILE.bak, so nothing is overwritten silently.
// A malformed line is reported with its number and skipped; the rest of the file is used.
// A file torch's TunableOp wrote (its validators, PT_VERSION first) is another program's: its
// Solutions name torch's implementations and its keys lack cudakit's fields, and torch rewrites it
// at exit. cudakit says so once and leaves it alone, neither reading nor rewriting it, rather
// than warning for every line and replacing torch's results with its own (both would otherwise
// share it by default: hence cudakit's default FILENAME is not torch's).
namespace {

struct DeviceState {
  std::unordered_map<GemmKey, detail::StoredResult, GemmKeyHash> results;
  bool loaded = false;           // its results file was read (or found missing)
  std::string appending_to;      // the file new results are appended to ("" none)
  std::set<std::string> untuned; // keys already written to the untuned file
  std::vector<Validator> validators;
};

struct State {
  std::mutex mutex;
  TuningOptions options;
  std::unordered_map<int, DeviceState> devices;
  std::deque<std::mutex> tuning_mutexes;  // deque: stable addresses
  bool write_on_exit = true;
  bool modified = false;

};

std::atomic<std::uint64_t> generation{1};
std::atomic<bool> enabled_flag{false};

State& state() {
  static State* s = [] {
    auto* created = new State;
    try {
      created->options = TuningOptions::from_environment();
    } catch (const Error& e) {
      CUDAKIT_LOG(warning, "TunableOp: ", e.what(), "; using the defaults");
    }
    enabled_flag.store(created->options.enabled, std::memory_order_relaxed);
    return created;
  }();
  return *s;
}

// The state lives for the whole process (GEMMs may run during static destruction); this object's
// destructor does write_file_on_exit: results are appended as they are found, and at exit each
// device's file is rewritten once, without duplicates. Failures then have no one to throw to.
// Constructed at load time, it also routes tensor::matmul when CUDAKIT_TUNABLEOP_ENABLED=1.
struct AtLoadAndExit {
  AtLoadAndExit() {
    if (enabled_flag.load(std::memory_order_relaxed) || state().options.enabled) detail::route_matmul(true);
  }
  ~AtLoadAndExit() {
    State& s = state();
    std::lock_guard lock(s.mutex);
    if (!s.write_on_exit || !s.modified) return;
    for (auto& [device, d] : s.devices) {
      if (d.appending_to.empty() || d.results.empty()) continue;
      try {
        std::vector<TuningResult> results;
        for (const auto& [key, r] : d.results) results.push_back({key, r.solution, r.time_ms});
        cudakit::detail::write_text_file_atomically(d.appending_to, format_results_file(d.validators, results),
                                                    "tunable::write_file_on_exit");
      } catch (const std::exception&) {
      }
    }
  }
};
const AtLoadAndExit at_load_and_exit;

void bump() { generation.fetch_add(1, std::memory_order_relaxed); }

int resolve(int device) { return device < 0 ? current_device() : device; }

std::string version_of(int version) { return format_cuda_version(version); }

std::vector<Validator> make_validators(int device) {
  int runtime = 0;
  cudaRuntimeGetVersion(&runtime);
  int major = 0, minor = 0, patch = 0;
  cublasGetProperty(MAJOR_VERSION, &major);
  cublasGetProperty(MINOR_VERSION, &minor);
  cublasGetProperty(PATCH_LEVEL, &patch);
  const DeviceProperties p = get_device_properties(device);
  return {
      {"CUDAKIT_VERSION", CUDAKIT_VERSION_STRING},
      {"CUDA_VERSION", version_of(runtime)},
      {"CUBLAS_VERSION", cudakit::detail::concat(major, '.', minor, '.', patch)},
      {"CUBLASLT_VERSION", std::to_string(cublasLtGetVersion())},
      {"GPU_NAME", p.name},
      {"COMPUTE_CAPABILITY", cudakit::detail::concat(p.major, '.', p.minor)},
  };
}

DeviceState& device_state(State& s, int device) {
  DeviceState& d = s.devices[device];
  if (d.validators.empty()) d.validators = make_validators(device);
  return d;
}

std::vector<TuningResult> results_of(const DeviceState& d) {
  std::vector<TuningResult> results;
  for (const auto& [key, r] : d.results) results.push_back({key, r.solution, r.time_ms});
  std::sort(results.begin(), results.end(), [](const TuningResult& x, const TuningResult& y) {
    return std::pair(x.key.op_name(), x.key.signature()) < std::pair(y.key.op_name(), y.key.signature());
  });
  return results;
}

// Writes `d`'s results to `path` atomically, saving a file there with other validators as .bak.
void write_locked(DeviceState& d, const std::string& path, const char* api) {
  if (std::optional<std::string> old = cudakit::detail::try_read_text_file(path)) {
    const ResultsFileContents contents = parse_results_file(*old);
    const std::vector<ValidatorMismatch> mismatches = compare_validators(contents.validators, d.validators);
    if (!mismatches.empty() && !(contents.validators.empty() && contents.results.empty())) {
      cudakit::detail::write_text_file_atomically(path + ".bak", *old, api);
      CUDAKIT_LOG(warning, "TunableOp: ", path, " was written under other validators (", describe_mismatches(mismatches),
                  "); kept as ", path, ".bak");
    }
  }
  cudakit::detail::write_text_file_atomically(path, format_results_file(d.validators, results_of(d)), api);
}

// Reads `path` into `d` (the caller holds the lock, on `device`). False when it does not exist.
bool read_locked(DeviceState& d, int device, const std::string& path) {
  std::optional<std::string> text;
  try {
    text = cudakit::detail::read_text_file(path, "tunable::read_file");  // within the input limits
  } catch (const FileError& e) {
    if (e.status() == ENOENT) return false;
    throw;
  }
  const ResultsFileContents contents = parse_results_file(*text);
  if (written_by_torch(contents)) {
    // See Note [Results files]: torch's file, left to torch.
    if (d.appending_to == path) d.appending_to.clear();
    CUDAKIT_LOG(warning, "TunableOp: ", path, " holds torch's TunableOp results (Validator PT_VERSION), which name "
                "torch's implementations: cudakit neither reads nor rewrites it, and keeps this process's results "
                "in memory (CUDAKIT_TUNABLEOP_FILENAME names a file of cudakit's own)");
    return true;
  }
  for (const std::string& problem : contents.problems) {
    CUDAKIT_LOG(warning, "TunableOp: ", path, ": ", problem, " (skipped)");
  }
  const std::vector<ValidatorMismatch> mismatches = compare_validators(contents.validators, d.validators);
  DeviceGuard guard(device);
  int kept = 0, dropped = 0;
  for (const TuningResult& r : contents.results) {
    if (!mismatches.empty() && !detail::solution_runs_here(r.key, r.solution)) {
      ++dropped;
      continue;
    }
    d.results[r.key] = {r.solution, r.time_ms};
    ++kept;
  }
  if (!mismatches.empty()) {
    CUDAKIT_LOG(warning, "TunableOp: ", path, " was tuned elsewhere (", describe_mismatches(mismatches), "): ", kept,
                " result(s) still run here and are kept, ", dropped, " will be tuned again");
    write_locked(d, path, "tunable::read_file");
  }
  bump();
  return true;
}

void ensure_loaded(State& s, DeviceState& d, int device) {
  if (d.loaded) return;
  d.loaded = true;
  if (s.options.filename.empty()) return;
  const std::string path = device_filename(s.options.filename, device);
  d.appending_to = path;
  try {
    read_locked(d, device, path);
  } catch (const Error& e) {
    CUDAKIT_LOG(warning, "TunableOp: ", e.what(), "; starting without its results");
  }
}

}  // namespace

namespace detail {

std::uint64_t state_generation() noexcept { return generation.load(std::memory_order_relaxed); }
bool tunable_enabled() noexcept {
  (void)state();  // the environment read once
  return enabled_flag.load(std::memory_order_relaxed);
}

TuningOptions current_options() {
  State& s = state();
  std::lock_guard lock(s.mutex);
  return s.options;
}

std::optional<StoredResult> find_result(int device, const GemmKey& key) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  DeviceState& d = device_state(s, device);
  ensure_loaded(s, d, device);
  const auto it = d.results.find(key);
  if (it == d.results.end()) return std::nullopt;
  return it->second;
}

void store_result(int device, const GemmKey& key, const StoredResult& result) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  DeviceState& d = device_state(s, device);
  ensure_loaded(s, d, device);
  d.results[key] = result;
  s.modified = true;
  bump();
  if (d.appending_to.empty()) return;
  try {
    std::string text;
    if (!cudakit::detail::try_read_text_file(d.appending_to)) text = format_results_file(d.validators, {});
    text += format_result_line({key, result.solution, result.time_ms});
    text += '\n';
    cudakit::detail::append_text_file(d.appending_to, text, "tunable::store_result");
  } catch (const Error& e) {
    CUDAKIT_LOG(warning, "TunableOp: ", e.what(), "; the result is kept in memory");
  }
}

void drop_result(int device, const GemmKey& key) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  s.devices[device].results.erase(key);
  bump();
}

void record_untuned(int device, const GemmKey& key) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  if (!s.options.record_untuned || s.options.untuned_filename.empty()) return;
  DeviceState& d = s.devices[device];
  std::string line = format_untuned_line(key);
  if (!d.untuned.insert(line).second) return;
  line += '\n';
  try {
    cudakit::detail::append_text_file(device_filename(s.options.untuned_filename, device), line,
                                      "tunable::record_untuned");
  } catch (const Error& e) {
    CUDAKIT_LOG(warning, "TunableOp: ", e.what());
  }
}

std::mutex& tuning_mutex(int device) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  while (static_cast<int>(s.tuning_mutexes.size()) <= device) s.tuning_mutexes.emplace_back();
  return s.tuning_mutexes[static_cast<std::size_t>(device)];
}

}  // namespace detail

TuningOptions options() { return detail::current_options(); }

void set_options(const TuningOptions& o) {
  State& s = state();
  {
    std::lock_guard lock(s.mutex);
    const bool new_file = o.filename != s.options.filename;
    s.options = o;
    if (new_file) {
      for (auto& [device, d] : s.devices) {
        d.loaded = false;  // the new file is read on the device's next tuned GEMM
        d.appending_to.clear();
      }
    }
  }
  enabled_flag.store(o.enabled, std::memory_order_relaxed);
  detail::route_matmul(o.enabled);
  bump();
}

namespace {
template <class Change>
void change_options(Change&& change) {
  TuningOptions o = options();
  change(o);
  set_options(o);
}
}  // namespace

void enable(bool on) { change_options([&](TuningOptions& o) { o.enabled = on; }); }
bool is_enabled() { return detail::tunable_enabled(); }
void tuning_enable(bool on) { change_options([&](TuningOptions& o) { o.tuning = on; }); }
bool tuning_is_enabled() { return options().tuning; }
void record_untuned_enable(bool on) { change_options([&](TuningOptions& o) { o.record_untuned = on; }); }
bool record_untuned_is_enabled() { return options().record_untuned; }
void set_max_tuning_duration(int ms) { change_options([&](TuningOptions& o) { o.max_tuning_duration_ms = std::max(ms, 0); }); }
int get_max_tuning_duration() { return options().max_tuning_duration_ms; }
void set_max_tuning_iterations(int n) { change_options([&](TuningOptions& o) { o.max_tuning_iterations = std::max(n, 1); }); }
int get_max_tuning_iterations() { return options().max_tuning_iterations; }
void set_numerical_check(bool on) { change_options([&](TuningOptions& o) { o.numerical_check = on; }); }
void set_rotating_buffer_size(int mb) { change_options([&](TuningOptions& o) { o.rotating_buffer_size_mb = std::max(mb, -1); }); }
int get_rotating_buffer_size() { return options().rotating_buffer_size_mb; }
void set_filename(const std::string& filename) { change_options([&](TuningOptions& o) { o.filename = filename; }); }
std::string get_filename() { return options().filename; }

std::map<std::string, std::string> get_results(int device) {
  device = resolve(device);
  State& s = state();
  std::lock_guard lock(s.mutex);
  DeviceState& d = device_state(s, device);
  ensure_loaded(s, d, device);
  std::map<std::string, std::string> out;
  for (const TuningResult& r : results_of(d)) {
    const std::string line = format_result_line(r);
    const std::size_t second = line.find(',', line.find(',') + 1);
    out[line.substr(0, second)] = line.substr(second + 1);
  }
  return out;
}

std::vector<Validator> get_validators(int device) {
  device = resolve(device);
  State& s = state();
  std::lock_guard lock(s.mutex);
  return device_state(s, device).validators;
}

bool read_file(const std::string& filename, int device) {
  device = resolve(device);
  State& s = state();
  std::lock_guard lock(s.mutex);
  DeviceState& d = device_state(s, device);
  d.loaded = true;
  const std::string path = filename.empty() ? device_filename(s.options.filename, device) : filename;
  return read_locked(d, device, path);
}

void write_file(const std::string& filename, int device) {
  device = resolve(device);
  State& s = state();
  std::lock_guard lock(s.mutex);
  DeviceState& d = device_state(s, device);
  const std::string path = filename.empty() ? device_filename(s.options.filename, device) : filename;
  write_locked(d, path, "tunable::write_file");
}

void write_file_on_exit(bool on) {
  State& s = state();
  std::lock_guard lock(s.mutex);
  s.write_on_exit = on;
}

void clear_results() {
  State& s = state();
  {
    std::lock_guard lock(s.mutex);
    for (auto& [device, d] : s.devices) d.results.clear();
  }
  bump();
}

namespace {

// Tunes keys[i] for i = first, first + step, ... on `device`; returns how many were tuned.
int tune_share(const std::vector<GemmKey>& keys, int device, std::size_t first, std::size_t step,
               std::atomic<int>& done, int total, const std::function<void(int, int)>& progress,
               std::mutex& progress_mutex) {
  DeviceGuard guard(device);
  int tuned = 0;
  for (std::size_t i = first; i < keys.size(); i += step) {
    try {
      (void)tune(keys[i]);
      ++tuned;
    } catch (const Error& e) {
      CUDAKIT_LOG(warning, "TunableOp: ", keys[i].op_name(), ",", keys[i].signature(), ": ", e.what());
    }
    const int now = done.fetch_add(1) + 1;
    if (progress) {
      std::lock_guard lock(progress_mutex);
      progress(now, total);
    }
  }
  return tuned;
}

std::vector<GemmKey> read_untuned(const std::string& untuned_filename) {
  const UntunedFileContents contents =
      parse_untuned_file(cudakit::detail::read_text_file(untuned_filename, "tunable::tune_gemm_in_file"));
  for (const std::string& problem : contents.problems) {
    CUDAKIT_LOG(warning, "TunableOp: ", untuned_filename, ": ", problem, " (skipped)");
  }
  return contents.keys;
}

}  // namespace

int tune_gemm_in_file(const std::string& untuned_filename, const std::string& results_filename,
                      const std::function<void(int, int)>& progress) {
  return mgpu_tune_gemm_in_file(untuned_filename, 1, results_filename, progress);
}

int mgpu_tune_gemm_in_file(const std::string& untuned_filename, int devices, const std::string& results_filename,
                           const std::function<void(int, int)>& progress) {
  const std::vector<GemmKey> keys = read_untuned(untuned_filename);
  if (!results_filename.empty()) set_filename(results_filename);
  const int available = device_count();
  if (available == 0) throw StateError("tunable::tune_gemm_in_file", "no CUDA device to tune on");
  if (devices <= 0 || devices > available) devices = available;
  const int first_device = devices == 1 ? current_device() : 0;
  std::atomic<int> done{0};
  std::mutex progress_mutex;
  std::vector<int> tuned(static_cast<std::size_t>(devices), 0);
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(devices));
  std::vector<std::thread> threads;
  for (int i = 0; i < devices; ++i) {
    threads.emplace_back([&, i] {
      try {
        tuned[static_cast<std::size_t>(i)] = tune_share(keys, first_device + i, static_cast<std::size_t>(i),
                                                        static_cast<std::size_t>(devices), done,
                                                        static_cast<int>(keys.size()), progress, progress_mutex);
      } catch (...) {
        errors[static_cast<std::size_t>(i)] = std::current_exception();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  // Every device gets every result (the devices are alike: each key names its SM count).
  State& s = state();
  {
    std::lock_guard lock(s.mutex);
    std::unordered_map<GemmKey, detail::StoredResult, GemmKeyHash> all;
    for (int i = 0; i < devices; ++i) {
      for (const auto& [key, r] : s.devices[first_device + i].results) all[key] = r;
    }
    for (int i = 0; i < devices; ++i) {
      DeviceState& d = device_state(s, first_device + i);
      for (const auto& [key, r] : all) d.results.emplace(key, r);
      if (!s.options.filename.empty()) {
        write_locked(d, device_filename(s.options.filename, first_device + i), "tunable::tune_gemm_in_file");
      }
    }
  }
  bump();
  int total = 0;
  for (const int t : tuned) total += t;
  return total;
}

}  // namespace cudakit::tunable
