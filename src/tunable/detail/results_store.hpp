#pragma once
// The process's tuning state: options, and per device the results, the results file they are
// appended to, and the keys already recorded as untuned. See Note [Results files] in
// src/tunable/results_store.cpp.

#include <atomic>
#include <mutex>
#include <cstdint>
#include <optional>

#include "cudakit/tunable/gemm_key.hpp"
#include "cudakit/tunable/options.hpp"
#include "cudakit/tunable/solution.hpp"

namespace cudakit::tunable::detail {

struct StoredResult {
  Solution solution;
  double time_ms = 0;
};

// Bumped whenever results or options change; a thread's cached plans from an older generation
// are looked up again. One relaxed load per GEMM.
[[nodiscard]] std::uint64_t state_generation() noexcept;

// Whether TunableOp is enabled (one relaxed load).
[[nodiscard]] bool tunable_enabled() noexcept;
[[nodiscard]] TuningOptions current_options();

// The stored result of `key` on `device`, reading the device's results file first if this is the
// device's first lookup.
[[nodiscard]] std::optional<StoredResult> find_result(int device, const GemmKey& key);
// Stores a result and appends it to the device's results file (when a file name is set).
void store_result(int device, const GemmKey& key, const StoredResult& result);
// Drops a result that turned out not to run here (its algorithm failed cublasLtMatmulAlgoCheck).
void drop_result(int device, const GemmKey& key);
// Appends `key` to the device's untuned file, once per key and process.
void record_untuned(int device, const GemmKey& key);

// One tuning at a time per device: tuning times the GPU, and two at once would time each other.
[[nodiscard]] std::mutex& tuning_mutex(int device);

}  // namespace cudakit::tunable::detail
