#pragma once
// @brief GEMMs through TunableOp: each distinct GemmKey is tuned once (when tuning is on) and runs its
// fastest implementation from then on. See Note [TunableOp's hot path] in src/tunable/gemm.cpp.
//
//   cudakit::tunable::GemmArgs g;
//   g.key.op = GemmOp::gemm; g.key.transa = 't'; g.key.m = 4096; g.key.n = 16; g.key.k = 4096;
//   g.key.lda = 4096; g.key.ldb = 4096; g.key.ldc = 4096;
//   g.key.a_type = g.key.b_type = g.key.c_type = GemmDType::bfloat16;
//   g.a = w; g.b = x; g.c = y;
//   cudakit::tunable::gemm(g, stream);
//
// Streams: the GEMM is queued on `stream` (default: the current stream of the current device).
// Tuning, when it happens, runs on that stream too and synchronizes it.

#include <cstddef>
#include <string>
#include <vector>

#include "cudakit/core/optional_stream.hpp"
#include "cudakit/tunable/gemm_key.hpp"
#include "cudakit/tunable/solution.hpp"
#include "cudakit/tunable/tuning_loop.hpp"

namespace cudakit::tunable {

// cuBLASLt's FP8 kernels on Hopper read each scale as part of a 16-byte load: a scale pointer off
// that alignment gets CUBLAS_STATUS_NOT_SUPPORTED from cublasLtMatmul for every FP8 type pair
// and output type (notes/figures.md, "TunableOp"), although the heuristic and
// cublasLtMatmulAlgoCheck accept it. gemm() refuses such a pointer before cuBLASLt is called.
inline constexpr std::size_t kScaleAlignment = 16;

// One GEMM call: the problem and its operands. C = alpha * op(A) op(B) + beta * C in cuBLAS's
// column-major terms (gemm_key.hpp); the pointers are device memory on the stream's device.
struct GemmArgs {
  // The problem. workspace_bytes, alignment and sm_count are filled in by the calls below (from
  // the device, the pointers and the stream's context): leave them.
  GemmKey key;
  const void* a = nullptr;          // A, of key.a_type, lda apart (batched: stride_a between GEMMs)
  const void* b = nullptr;          // B, of key.b_type, ldb apart (batched: stride_b between GEMMs)
  void* c = nullptr;                // C input (when beta != 0) and D output, ldc apart
  const void* bias = nullptr;       // m elements of c_type, for epilogues with a bias
  // ScaledGemm: device pointers to float32 scales, 16-byte aligned (kScaleAlignment): one float
  // each for ScaleMode::scalar (the key's scale_a_mode / scale_b_mode), else
  // scale_elements(mode, rows, k) floats in the layout of Note [FP8 scale modes]
  // (src/tunable/gemm_key.cpp): A's rows are m, B's n. D = alpha * (scale_a . A)(scale_b . B).
  const float* scale_a = nullptr;
  const float* scale_b = nullptr;   // ScaledGemm: B's scale, as scale_a (rows n)
  double alpha = 1;                 // the product's factor
  double beta = 0;                  // C's factor (0: C is not read)
};

// Runs the GEMM: its tuned solution when one is known, else (tuning on) tunes it first, else
// (or while the stream is capturing a graph) Default, recording the key as untuned when
// record_untuned is on. Nothing is done when m or n is 0. Plans are cached per thread and key.
// @param args the key and the operands' device pointers (on the stream's device)
// @param stream the GEMM is queued on `stream` (default: the current stream) and gemm() returns
//   before it finishes; a first call of a new key with tuning on tunes it first, on its own
//   operands, and synchronizes `stream` while it does (tune()).
// @throws InvalidArgumentError for an invalid key (naming the field) or missing pointers;
// CublasError (status() the cublasStatus_t) when cuBLAS or cuBLASLt fails.
// @throws OutOfMemoryError when the workspace (or, when tuning, the tuning operands) cannot be
//   allocated.
void gemm(const GemmArgs& args, OptionalStream stream = {});

// Runs one named solution, without tuning or looking anything up (tests, benchmarks).
// @throws InvalidArgumentError when the solution does not apply to the key here (a cuBLASLt
// configuration cublasLtMatmulAlgoCheck rejects, a GEMV for a shape it does not handle), for an
// invalid key or missing pointers.
// @throws CublasError when cuBLAS or cuBLASLt fails.
// @param args the key and the operands' device pointers (on the stream's device)
// @param solution the solution to run (Solution::parse of a results file's name, for one)
// @param stream the GEMM is queued on `stream` (default: the current stream); the call returns
//   before it finishes
void gemm_with_solution(const GemmArgs& args, const Solution& solution, OptionalStream stream = {});

// The key gemm() would use for `args` on `stream` (workspace, alignment and SM count filled in).
// Nothing is enqueued.
// @param args the key and the operands' pointers
// @param stream the stream gemm() would run on (default: the current stream); its device and
//   context give the workspace and SM count
// @return args.key with workspace_bytes, alignment and sm_count set (not validated).
[[nodiscard]] GemmKey complete_key(const GemmArgs& args, OptionalStream stream = {});

// What tune() timed and chose.
struct TuningReport {
  GemmKey key;             // the key tuned
  Solution chosen;         // the fastest candidate (Default unless another was faster beyond the noise)
  double chosen_ms = 0;    // its median time per run
  double default_ms = 0;   // Default's median time per run
  Solution first_heuristic;       // cuBLASLt's first heuristic choice (Default where Default is it)
  double first_heuristic_ms = 0;  // its median (0: none timed)
  double tuning_ms = 0;           // wall time of the whole tuning
  std::vector<Solution> candidates;  // same order as decision.candidates
  std::vector<std::string> dropped;  // "Lt_...: differs from Default (ratio 3.2)", ...
  TuningDecision decision;  // the tuning loop's decision, over the timed candidates
};

// Tunes `key` on the stream's device with operands of its own (random values in [-1, 1]), records
// the result (and appends it to the results file when one is set), and reports what it timed.
// Used by gemm() on a new key, by offline tuning, and by benchmarks. Tunings on one device take
// turns (one at a time); a key with m, n or k 0 is recorded as Default without timing.
// @param key the GEMM to tune (complete_key() fills what a caller leaves out)
// @param stream the candidates run on `stream`, timed by events there; tune() synchronizes it
//   and returns when the tuning has finished
// @return the chosen solution, the timings and the dropped candidates
// @throws InvalidArgumentError for an invalid key (naming the field)
// @throws OutOfMemoryError when the tuning operands cannot be allocated.
// @throws CublasError when cuBLAS fails for Default.
[[nodiscard]] TuningReport tune(const GemmKey& key, OptionalStream stream = {});

}  // namespace cudakit::tunable
