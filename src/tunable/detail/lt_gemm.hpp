#pragma once
// The cuBLASLt side of the GEMM candidates: descriptors for a key, the heuristic's algorithms,
// algorithms enumerated beyond it, and an algorithm rebuilt from a Solution's configuration.

#include <cublasLt.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <source_location>
#include <vector>

#include "cudakit/core/stream_ref.hpp"
#include "cudakit/tunable/gemm_key.hpp"
#include "cudakit/tunable/solution.hpp"

namespace cudakit::tunable::detail {

// @throws CublasError (status() the cublasStatus_t) naming `api` unless `status` is success.
void check_cublaslt(cublasStatus_t status, const char* api,
                    std::source_location location = std::source_location::current());

// The calling thread's cuBLASLt handle for the current device.
[[nodiscard]] cublasLtHandle_t lt_handle();

// Descriptors of one key: the operation (types, transposes, epilogue) and A, B, C (= D) layouts.
// Owned; the bias and scale pointers are set per call (set_pointers).
class LtDescriptors {
 public:
  explicit LtDescriptors(const GemmKey& key);
  ~LtDescriptors();
  LtDescriptors(const LtDescriptors&) = delete;
  LtDescriptors& operator=(const LtDescriptors&) = delete;

  void set_pointers(const void* bias, const float* scale_a, const float* scale_b);
  [[nodiscard]] const GemmKey& key() const noexcept { return key_; }
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;

 private:
  void release() noexcept;
  GemmKey key_;
  const void* bias_ = nullptr;
  const float* scale_a_ = nullptr;
  const float* scale_b_ = nullptr;
};

struct LtAlgo {
  cublasLtMatmulAlgo_t algo;
  std::size_t workspace_bytes = 0;
  LtAlgoConfig config;
};

// Up to `count` algorithms of cuBLASLt's heuristic, best first, each with its configuration; the
// heuristic is offered the key's workspace, or `workspace_limit` bytes when that is smaller.
[[nodiscard]] std::vector<LtAlgo> heuristic_algos(const LtDescriptors& d, int count,
                                                  std::optional<std::size_t> workspace_limit = std::nullopt);
// Algorithms from cublasLtMatmulAlgoGetIds with tiles, stages, split-K, reduction schemes and
// swizzles from their capabilities, each passing cublasLtMatmulAlgoCheck and within the key's
// workspace, none equal to one in `known`; at most `max_count`, the ones with the most even
// waves first. See Note [Enumerating algorithms].
[[nodiscard]] std::vector<LtAlgo> enumerated_algos(const LtDescriptors& d, const std::vector<LtAlgoConfig>& known,
                                                   int max_count);
// Configurations next to the first `seeds` (the heuristic's best): other cluster shapes and the
// other swizzle, each passing cublasLtMatmulAlgoCheck, none in `known`; at most `max_count`, in
// seed order. See Note [Neighbours of the heuristic's choices].
[[nodiscard]] std::vector<LtAlgo> neighbour_algos(const LtDescriptors& d, const std::vector<LtAlgoConfig>& seeds,
                                                  const std::vector<LtAlgoConfig>& known, int max_count);
// The algorithm a configuration names, when cublasLtMatmulAlgoCheck accepts it here.
[[nodiscard]] std::optional<LtAlgo> algo_from_config(const LtDescriptors& d, const LtAlgoConfig& config);

// D = alpha op(A) op(B) + beta C with `algo` (null: cuBLASLt's own heuristic choice).
void lt_matmul(const LtDescriptors& d, const LtAlgo* algo, const void* a, const void* b, void* c,
               double alpha, double beta, void* workspace, std::size_t workspace_bytes, StreamRef stream);

}  // namespace cudakit::tunable::detail
