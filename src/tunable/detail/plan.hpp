#pragma once
// A solution made ready to run for one key on the calling thread: the cuBLASLt descriptors and
// algorithm it needs, built once and reused by every later call. See Note [TunableOp's hot path].

#include <array>
#include <memory>
#include <optional>

#include "cudakit/core/stream_ref.hpp"
#include "cudakit/core/trace_event.hpp"
#include "cudakit/tunable/gemm.hpp"
#include "tunable/detail/lt_gemm.hpp"

namespace cudakit::tunable::detail {

struct Plan {
  Solution solution;
  std::unique_ptr<LtDescriptors> lt;  // cuBLASLt solutions, and Default of epilogue/FP8 keys
  std::optional<LtAlgo> algo;         // the cuBLASLt algorithm (Default of those keys: heuristic's first)
  std::uint64_t generation = 0;
  bool provisional = false;           // Default chosen while capturing: looked up again after
};

// Whether Default is a cuBLASLt call (epilogue and FP8 keys) rather than cublasGemmStridedBatchedEx.
[[nodiscard]] bool default_is_lt(const GemmKey& key);

// The plan of `solution` for `key` (on the current device).
// @throws InvalidArgumentError when the solution does not run for the key here.
[[nodiscard]] Plan make_plan(const GemmKey& key, const Solution& solution);

// Bytes of a scale of `mode` for an operand of `rows` x k (float32 elements, scale_elements).
[[nodiscard]] std::size_t scale_bytes(ScaleMode mode, std::int64_t rows, std::int64_t k);

// The byte ranges the GEMM of `args` touches (a, b, c, bias, the two scales; absent ones empty),
// for the trace hooks.
[[nodiscard]] std::array<MemoryAccess, 6> gemm_accesses(const GemmArgs& args);

// Queues the plan's GEMM on `stream` with the operands of `args` (whose key is the plan's).
// Reports the GEMM to the trace hooks as one operation with `args`' byte ranges (cuBLAS's and
// cuBLASLt's kernels are not launched through them; the GEMV kernels report themselves), unless
// `report` is false (the caller has reported it). The tuner's candidate runs report too: they are
// real work on the stream, and a sanitizer that missed them would find the check kernels reading
// memory nothing wrote.
void run_plan(Plan& plan, const GemmArgs& args, StreamRef stream, bool report = true);

}  // namespace cudakit::tunable::detail
