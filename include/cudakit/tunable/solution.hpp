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

// A cuBLASLt algorithm by its configuration attributes: with cublasLtMatmulAlgoInit(algo_id)
// and these set, the same algorithm is rebuilt in any process whose cuBLASLt still has it.
struct LtAlgoConfig {
  int algo_id = 0;        // the algorithm (cublasLtMatmulAlgoInit's algoId; CUBLASLT_ALGO_CONFIG_ID)
  int tile = 0;           // CUBLASLT_ALGO_CONFIG_TILE_ID
  int stages = 0;         // CUBLASLT_ALGO_CONFIG_STAGES_ID
  int splitk = 1;         // CUBLASLT_ALGO_CONFIG_SPLITK_NUM: parts k is split into (1: none)
  int reduction = 0;      // CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME: how split-K parts are summed
  int swizzle = 0;        // CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING
  int custom = 0;         // CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION
  int inner_shape = 0;    // CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID
  int cluster_shape = 0;  // CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID
  // Whether both name the same algorithm configuration.
  // @return true when every attribute is equal.
  bool operator==(const LtAlgoConfig&) const = default;
};

// Which of cudakit's decode-size kernels a Kind::gemv solution runs.
enum class GemvKernel : std::uint8_t {
  split_k,  // Gemv_k: shared-memory staging, split-K across blocks
  stream,   // GemvStream: R rows a block, k split across the block's warps
  mma,      // GemvMma: 16 or 32 rows a block on tensor cores, k split across the block's warps
};

// How a CUTLASS kernel's warp groups share the output tiles (Kind::cutlass).
enum class CutlassSchedule : std::uint8_t {
  cooperative,  // "coop": two consumer warp groups on one tile
  pingpong,     // two consumer warp groups on alternate tiles, one's epilogue under the other's math
  stream_k,     // "streamk": cooperative, k split across CTAs where the tiles leave a wave part-empty
};

// A CUTLASS kernel's configuration (Kind::cutlass): its CTA tile, thread-block cluster and schedule,
// and the swizzle of its tile order (a run-time choice: the same kernel at every swizzle).
struct CutlassConfig {
  int tile_m = 0;     // rows of C a CTA's tile has
  int tile_n = 0;     // columns of C a CTA's tile has
  int tile_k = 0;     // k a main-loop step (one shared-memory stage) covers
  int cluster_m = 1;  // CTAs a thread-block cluster has along m
  int cluster_n = 1;  // CTAs a thread-block cluster has along n
  CutlassSchedule schedule = CutlassSchedule::cooperative;  // how warp groups share the tiles
  int swizzle = 1;  // consecutive tiles along one side before the other advances (1, 2, 4 or 8)
  // Whether both name the same kernel at the same swizzle.
  // @return true when every field is equal.
  bool operator==(const CutlassConfig&) const = default;
};

// One implementation of a GEMM, as a result names it (the grammar above). Only the fields of its
// kind matter; the others keep their defaults.
struct Solution {
  // Which family the implementation is of: cuBLAS's own choice (Default), one cuBLASLt algorithm,
  // one of cudakit's decode-size kernels, or one of CUTLASS's Hopper kernels.
  enum class Kind : std::uint8_t { default_, lt, gemv, cutlass };
  Kind kind = Kind::default_;  // the family; decides which fields below matter
  LtAlgoConfig lt;      // Kind::lt
  int gemv_splits = 1;  // Kind::gemv: how many parts k is split into across blocks (1, 2, 4, ...)
  GemvKernel gemv_kernel = GemvKernel::split_k;  // Kind::gemv: which kernel
  int gemv_rows = 0;    // GemvStream / GemvMma: rows of the big operand a block owns (0 for Gemv_k)
  CutlassConfig cutlass;  // Kind::cutlass

  // Whether both name the same implementation.
  // @return true when every field is equal.
  bool operator==(const Solution&) const = default;
  // @return Default: cuBLAS's (or, for GemmAndBias and ScaledGemm, cuBLASLt's heuristic's) own
  //   choice.
  [[nodiscard]] static Solution default_solution() { return {}; }
  // A Kind::gemv solution (rows 0 for GemvKernel::split_k).
  // @param kernel which decode-size kernel
  // @param rows rows of the big operand a block owns (0 for GemvKernel::split_k)
  // @param splits how many parts k is split into across blocks
  // @return the solution (not checked against any key: see gemm_with_solution())
  [[nodiscard]] static Solution gemv(GemvKernel kernel, int rows, int splits) {
    Solution s;
    s.kind = Kind::gemv;
    s.gemv_kernel = kernel;
    s.gemv_rows = rows;
    s.gemv_splits = splits;
    return s;
  }
  // @return the Solution field of a results file for this solution ("Default", "Lt_a66_t...",
  //   "GemvStream_r8_k2", ...).
  [[nodiscard]] std::string name() const;
  // The solution name() wrote.
  // @param text a results file's Solution field
  // @return the solution it names
  // @throws InvalidArgumentError naming the text and what is wrong with it.
  [[nodiscard]] static Solution parse(std::string_view text);
};

}  // namespace cudakit::tunable
