#pragma once
// @brief Solution: which implementation of a GEMM a result names, as the Solution field of a results
// file writes it:
//   Default                                   cuBLAS's own choice (see gemm.hpp)
//   Lt_a{algo}_t{tile}_s{stages}_k{splitk}_r{reduction}_w{swizzle}_c{custom}_i{inner}_g{cluster}
//                                             one cuBLASLt algorithm, by its configuration
//   Gemv_k{splits}                            cudakit's first memory-bound kernel for m or n <= 16
//   GemvStream_r{rows}_k{splits}              the streaming CUDA-core kernel, `rows` rows a block
//   GemvMma_r{rows}_k{splits}                 the tensor-core (mma.sync) kernel, 16-bit types
//                                             (See Note [Decode GEMMs] in src/tunable/gemv.cu)
//   Cutlass_t{m}x{n}x{k}_g{m}x{n}_{schedule}_s{swizzle}
//                                             a CUTLASS Hopper kernel: tile, cluster shape,
//                                             schedule (coop, pingpong, streamk) and the tile
//                                             order's swizzle; See Note [CUTLASS candidates] in
//                                             src/tunable/cutlass_gemm.cpp
// A cuBLASLt algorithm is written by its configuration attributes (CUBLASLT_ALGO_CONFIG_*), not by
// its opaque bytes: cublasLtMatmulAlgoInit plus these attributes rebuild it in another process,
// and cublasLtMatmulAlgoCheck says whether it still runs there.

#include <cstdint>
#include <string>
#include <string_view>

namespace cudakit::tunable {

struct LtAlgoConfig {
  int algo_id = 0;
  int tile = 0;
  int stages = 0;
  int splitk = 1;
  int reduction = 0;
  int swizzle = 0;
  int custom = 0;
  int inner_shape = 0;
  int cluster_shape = 0;
  bool operator==(const LtAlgoConfig&) const = default;
};

// Which of cudakit's decode-size kernels a Kind::gemv solution runs.
enum class GemvKernel : std::uint8_t {
  split_k,  // Gemv_k: shared-memory staging, split-K across blocks
  stream,   // GemvStream: R rows a block, k split across the block's warps
  mma,      // GemvMma: 16 or 32 rows a block on tensor cores, k split across the block's warps
};

// A CUTLASS kernel's configuration (Kind::cutlass): its CTA tile, thread-block cluster and schedule,
// and the swizzle of its tile order (a run-time choice: the same kernel at every swizzle).
enum class CutlassSchedule : std::uint8_t { cooperative, pingpong, stream_k };
struct CutlassConfig {
  int tile_m = 0, tile_n = 0, tile_k = 0;
  int cluster_m = 1, cluster_n = 1;
  CutlassSchedule schedule = CutlassSchedule::cooperative;
  int swizzle = 1;
  bool operator==(const CutlassConfig&) const = default;
};

struct Solution {
  enum class Kind : std::uint8_t { default_, lt, gemv, cutlass };
  Kind kind = Kind::default_;
  LtAlgoConfig lt;      // Kind::lt
  int gemv_splits = 1;  // Kind::gemv: how many parts k is split into across blocks (1, 2, 4, ...)
  GemvKernel gemv_kernel = GemvKernel::split_k;
  int gemv_rows = 0;    // GemvStream / GemvMma: rows of the big operand a block owns (0 for Gemv_k)
  CutlassConfig cutlass;  // Kind::cutlass

  bool operator==(const Solution&) const = default;
  [[nodiscard]] static Solution default_solution() { return {}; }
  // A Kind::gemv solution (rows 0 for GemvKernel::split_k).
  [[nodiscard]] static Solution gemv(GemvKernel kernel, int rows, int splits) {
    Solution s;
    s.kind = Kind::gemv;
    s.gemv_kernel = kernel;
    s.gemv_rows = rows;
    s.gemv_splits = splits;
    return s;
  }
  [[nodiscard]] std::string name() const;
  // @throws InvalidArgumentError naming the text and what is wrong with it.
  [[nodiscard]] static Solution parse(std::string_view text);
};

}  // namespace cudakit::tunable
