#pragma once
// @brief TuningOptions: how TunableOp behaves, with the CUDAKIT_TUNABLEOP_* variables that mirror
// PyTorch's PYTORCH_TUNABLEOP_* ones (same names after the prefix, same grammar: 0/1 switches,
// integers, file names with an optional %d for the device ordinal).

#include <functional>
#include <string>

namespace cudakit::tunable {

// TunableOp's settings, one field per CUDAKIT_TUNABLEOP_* variable (each field's comment names
// it). The process's options are read from the environment once and changed with set_options()
// and the other functions of tunable.hpp.
struct TuningOptions {
  bool enabled = false;        // ENABLED: route GEMMs through TunableOp at all (torch: off)
  bool tuning = true;          // TUNING: tune shapes that have no result yet
  bool record_untuned = false; // RECORD_UNTUNED: write shapes without a result to the untuned file
  // FILENAME: the results file. Not torch's default (tunableop_results%d.csv): a program that
  // tunes with both would have each rewrite the other's file (See Note [Results files]).
  std::string filename = "cudakit_tunableop_results%d.csv";
  std::string untuned_filename = "cudakit_tunableop_untuned%d.csv";  // UNTUNED_FILENAME (not torch's either)
  // NUMERICAL_CHECK: compare each candidate's result with Default's and drop those that differ
  // beyond the dtype's tolerance. On by default, unlike torch: our candidates include split-K and
  // reduced-precision-accumulation kernels that torch's CUDA build never runs.
  bool numerical_check = true;
  int max_tuning_duration_ms = 30;    // MAX_TUNING_DURATION_MS: timed per candidate, at most
  int max_tuning_iterations = 100;    // MAX_TUNING_ITERATIONS: rounds, at most
  int max_warmup_duration_ms = 0;     // MAX_WARMUP_DURATION_MS (0: no limit besides iterations)
  int max_warmup_iterations = 1;      // MAX_WARMUP_ITERATIONS (at least one call is made anyway)
  bool icache_flush = true;           // ICACHE_FLUSH_ENABLED: flush L2 before each timed sample
  int rotating_buffer_size_mb = -1;   // ROTATING_BUFFER_SIZE: input copies cycled (-1: 2x L2)
  int verbose = 0;                    // VERBOSE: 1 logs each decision, 2 each candidate's time
  // cudakit's own: the whole tuning of one shape, at most (MAX_SHAPE_TUNING_MS).
  int max_shape_tuning_ms = 2000;
  // cudakit's own: algorithms enumerated beyond cuBLASLt's heuristic that are timed, at most
  // (MAX_ENUMERATED_CANDIDATES).
  int max_enumerated_candidates = 32;
  // cudakit's own: other cluster shapes and swizzles of the heuristic's first choices that are
  // timed, at most (MAX_NEIGHBOUR_CANDIDATES).
  int max_neighbour_candidates = 24;

  // The options the variables give, over the defaults. `getenv` is the environment (std::getenv
  // by default). Unset or empty variables leave the default.
  // @param getenv looks a variable up (nullptr for an unset one); empty: std::getenv
  // @return the defaults with every set variable applied
  // @throws InvalidArgumentError naming the variable and its value, for a switch that is neither
  //   0 nor 1 or an integer that is none or below the field's minimum.
  [[nodiscard]] static TuningOptions from_environment(
      const std::function<const char*(const char*)>& getenv = {});
};

}  // namespace cudakit::tunable
