#pragma once
// The CUTLASS kernel of one configuration and dtype, built from CUTLASS 3's collective builders,
// for the generated sources (one per configuration and dtype: CMake's cutlass_instance.cu.in) to
// instantiate. Compiled for sm_90a only. See Note [CUTLASS candidates] in cutlass_gemm.cpp.

#include <cute/tensor.hpp>
#include <cutlass/cutlass.h>
#include <cutlass/bfloat16.h>
#include <cutlass/half.h>
#include <cutlass/epilogue/collective/collective_builder.hpp>
#include <cutlass/gemm/collective/collective_builder.hpp>
#include <cutlass/gemm/device/gemm_universal_adapter.h>
#include <cutlass/gemm/kernel/gemm_universal.hpp>
#include <cutlass/gemm/kernel/tile_scheduler.hpp>

#include <atomic>
#include <cstdint>
#include <type_traits>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/error.hpp"
#include "tunable/detail/cutlass_gemm.hpp"

namespace cudakit::tunable::detail {

template <GemmDType D>
using CutlassElement = std::conditional_t<D == GemmDType::bfloat16, cutlass::bfloat16_t, cutlass::half_t>;

// C = alpha op(A) op(B) + beta C, column-major: CUTLASS's (M, N, K, L) problem with A M x K
// (K-major: RowMajor, for transa = t; else ColumnMajor), B N x K K-major (ColumnMajor, transb = n)
// and C, D M x N ColumnMajor, L the batch.
template <CutlassConfig C, GemmDType D, class LayoutA>
struct CutlassGemm {
  using Element = CutlassElement<D>;
  using LayoutB = cutlass::layout::ColumnMajor;
  using LayoutC = cutlass::layout::ColumnMajor;
  static constexpr int kAlignment = 16 / static_cast<int>(sizeof(Element));  // TMA: 16 bytes
  using TileShape = cute::Shape<cute::Int<C.tile_m>, cute::Int<C.tile_n>, cute::Int<C.tile_k>>;
  using ClusterShape = cute::Shape<cute::Int<C.cluster_m>, cute::Int<C.cluster_n>, cute::_1>;
  static constexpr bool kPingpong = C.schedule == CutlassSchedule::pingpong;
  using KernelSchedule = std::conditional_t<kPingpong, cutlass::gemm::KernelTmaWarpSpecializedPingpong,
                                            cutlass::gemm::KernelTmaWarpSpecializedCooperative>;
  using EpilogueSchedule = std::conditional_t<kPingpong, cutlass::epilogue::TmaWarpSpecialized,
                                              cutlass::epilogue::TmaWarpSpecializedCooperative>;
  // Both schedules are persistent (a grid of at most one CTA per SM walking the tiles); stream-K
  // also splits k where the tiles do not divide into full waves.
  using TileScheduler =
      std::conditional_t<C.schedule == CutlassSchedule::stream_k, cutlass::gemm::StreamKScheduler,
                         cutlass::gemm::PersistentScheduler>;
  using Epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
      cutlass::epilogue::collective::EpilogueTileAuto, float, float, Element, LayoutC, kAlignment, Element,
      LayoutC, kAlignment, EpilogueSchedule>::CollectiveOp;
  using Mainloop = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Element, LayoutA, kAlignment, Element, LayoutB,
      kAlignment, float, TileShape, ClusterShape,
      cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(
          sizeof(typename Epilogue::SharedStorage))>,
      KernelSchedule>::CollectiveOp;
  using Kernel = cutlass::gemm::kernel::GemmUniversal<cute::Shape<int, int, int, int>, Mainloop, Epilogue,
                                                      TileScheduler>;
  using Adapter = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;

  static typename Kernel::Arguments arguments(const CutlassProblem& p) {
    typename Kernel::StrideA stride_a{};
    if constexpr (std::is_same_v<LayoutA, cutlass::layout::RowMajor>) {
      cute::get<0>(stride_a) = p.lda;  // (M, K, L): rows lda apart, K contiguous
    } else {
      cute::get<1>(stride_a) = p.lda;  // M contiguous
    }
    cute::get<2>(stride_a) = p.stride_a;
    typename Kernel::StrideB stride_b{};
    cute::get<0>(stride_b) = p.ldb;  // (N, K, L): op(B)'s columns ldb apart, K contiguous
    cute::get<2>(stride_b) = p.stride_b;
    typename Kernel::StrideC stride_c{};
    cute::get<1>(stride_c) = p.ldc;  // (M, N, L): M contiguous
    cute::get<2>(stride_c) = p.stride_c;
    typename Kernel::StrideD stride_d = stride_c;
    auto* c = static_cast<Element*>(p.c);
    typename Kernel::Arguments args{
        cutlass::gemm::GemmUniversalMode::kGemm,
        {p.m, p.n, p.k, p.batch},
        {static_cast<const Element*>(p.a), stride_a, static_cast<const Element*>(p.b), stride_b},
        {{p.alpha, p.beta}, c, stride_c, c, stride_d}};
    args.hw_info.device_id = p.device;
    args.hw_info.sm_count = p.sm_count;
    args.scheduler.max_swizzle_size = p.swizzle;
    return args;
  }

  static std::size_t workspace_bytes(const CutlassProblem& p) {
    return Adapter::get_workspace_size(arguments(p));
  }

  static void run(const CutlassProblem& p, void* workspace, cudaStream_t stream) {
    const typename Kernel::Arguments args = arguments(p);
    const auto fail = [&](const char* step, cutlass::Status status) {
      CutlassConfig named = C;
      named.swizzle = p.swizzle;
      throw InvalidArgumentError(
          "tunable::launch_cutlass",
          cudakit::detail::concat(cutlass_solution(named).name(), ": CUTLASS's ", step, " says \"",
                                  cutlass::cutlassGetStatusString(status), "\" for ", p.m, " x ", p.n, " x ",
                                  p.k, " (batch ", p.batch, ")"));
    };
    if (const cutlass::Status s = Adapter::can_implement(args); s != cutlass::Status::kSuccess)
      fail("can_implement", s);
    // The stream-K schedule's workspace is zeroed on the stream; the others have nothing to do.
    if (const cutlass::Status s = Kernel::initialize_workspace(args, workspace, stream);
        s != cutlass::Status::kSuccess) {
      fail("initialize_workspace", s);
    }
    typename Kernel::Params params = Kernel::to_underlying_arguments(args, workspace);
    allow_shared_memory(p.device);
    if (const cutlass::Status s = Adapter::run(params, stream); s != cutlass::Status::kSuccess)
      fail("run", s);
    CUDAKIT_CHECK_CUDA(cudaGetLastError());
  }

  // The kernel's dynamic shared memory (over the 48 KiB default) allowed once per device, not at
  // every call as the adapter's initialize() would.
  static void allow_shared_memory(int device) {
    static std::atomic<std::uint64_t> done{0};
    const std::uint64_t bit = device >= 0 && device < 64 ? std::uint64_t{1} << device : 0;
    if (bit && (done.load(std::memory_order_acquire) & bit)) return;
    CUDAKIT_CHECK_CUDA(cudaFuncSetAttribute(cutlass::device_kernel<Kernel>,
                                            cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(Kernel::SharedStorageSize)));
    done.fetch_or(bit, std::memory_order_release);
  }
};

template <int Config, GemmDType D>
CutlassKernel cutlass_kernel(char transa) {
  constexpr CutlassConfig c = kCutlassConfigs[Config];
  if (transa == 't') {
    using G = CutlassGemm<c, D, cutlass::layout::RowMajor>;
    return {&G::workspace_bytes, &G::run};
  }
  using G = CutlassGemm<c, D, cutlass::layout::ColumnMajor>;
  return {&G::workspace_bytes, &G::run};
}

}  // namespace cudakit::tunable::detail
