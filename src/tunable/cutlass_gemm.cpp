#include "tunable/detail/cutlass_gemm.hpp"

#include <algorithm>
#include <climits>
#include <utility>

#include "cudakit/core/detail/concat.hpp"
#include "cudakit/core/error.hpp"

namespace cudakit::tunable::detail {

// Note [CUTLASS candidates]
// Where cuBLAS leaves speed behind on a compute-bound bfloat16/float16 GEMM, a kernel of CUTLASS
// (NVIDIA's header-only template library) may not: its Hopper kernels are warp-specialized (a
// producer warp group issues TMA loads of A and B tiles into a ring of shared-memory stages, one
// or two consumer warp groups run WGMMA on them), persistent (one CTA per SM walks the output
// tiles) and clustered (the CTAs of a 1x2 or 2x1 cluster share each other's A or B tiles through
// TMA multicast). cuBLAS's own kernels for these shapes are the same design
// (`nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA`: notes/tunable.md), so what a CUTLASS candidate
// adds is other points of the same space: other tiles, schedules and tile orders where cuBLAS's
// heuristic picked a poor one. The tuner keeps one only where it is measured faster than Default
// and within Note [GEMM tolerance] of Default's result, as every candidate.
//
// The configurations (kCutlassConfigs): 128x256x64 cooperative in a 2x1 cluster and 256x128x64
// cooperative in a 1x2 cluster (two consumer warp groups on one tile: large square and
// rectangular shapes), 128x128x64 ping-pong in a 1x2 cluster (two warp groups on alternate tiles,
// one's epilogue under the other's math: smaller shapes, more tiles), and 128x256x64 with the
// stream-K schedule (k split where the tiles leave the last wave of SMs part-empty), each at two
// swizzles of the persistent tile order (1: row after row of tiles; 4: bands of 4 tiles, so that a
// wave of CTAs shares more of A and B in L2), a run-time choice that costs no build. Each is
// built for bfloat16 and float16 with float32 accumulation, C and D of the input type, and A
// K-major (TN: torch's F.linear) or M-major (NN: torch.matmul of row-major tensors); B K-major.
// Four configurations x two dtypes x two layouts: 16 kernels, one generated source a
// configuration and dtype, each compiled for sm_90a alone (WGMMA and TMA need the "a" target,
// which does not run on later GPUs), so the option that builds them (CUDAKIT_CUTLASS) adds build
// time and library size the notes record; it is on by default in Release builds that find the
// headers (scripts/fetch-cutlass.sh) and build for compute capability 9.0, off in the sanitizer
// and fuzz builds.
//
// What they refuse (no candidate is offered): other dtypes, epilogues, TF32, FP8; op(B) not
// K-major (transb = t); any operand TMA cannot address: pointers, leading dimensions and batch
// strides must be 16-byte multiples, and CUTLASS also asks it of the contiguous extents (k, and m
// where A or C is M-major); batches whose matrices overlap or repeat (a batch stride of 0). m, n and k need not be tile multiples (TMA fills zeros past the
// edges and clips the stores). Decode shapes (m or n <= 16) are left to cuBLAS and the GEMV
// kernels (a 128-wide tile would be mostly padding). alpha and beta are the call's; beta != 0
// reads C where D is written (the same tile, read before written by the CTA that owns it).
// The persistent grid is sized by the key's SM count, so a green context's GEMM stays within its
// SMs. Results are deterministic for the cooperative and ping-pong schedules; stream-K's partial
// sums are reduced in a fixed order (CUTLASS's deterministic reduction is its default).

static_assert(kCutlassConfigCount == CUDAKIT_CUTLASS_CONFIG_COUNT,
              "src/tunable/CMakeLists.txt's CUDAKIT_CUTLASS_CONFIG_COUNT is the number of kCutlassConfigs");

namespace {

// A TMA descriptor's stride: a multiple of 16 bytes under 2^40 bytes (cuTensorMapEncodeTiled).
constexpr bool is_16_byte_multiple(std::int64_t elements, std::size_t element_bytes) {
  return elements >= 0 && elements < (std::int64_t{1} << 36) &&
         (elements * static_cast<std::int64_t>(element_bytes)) % 16 == 0;
}

// The kernel's index in kCutlassConfigs (-1: none): the configuration but for the swizzle.
int config_index(CutlassConfig config) {
  config.swizzle = 1;
  const auto* it = std::find(std::begin(kCutlassConfigs), std::end(kCutlassConfigs), config);
  return it == std::end(kCutlassConfigs) ? -1 : static_cast<int>(it - std::begin(kCutlassConfigs));
}

#if CUDAKIT_HAS_CUTLASS
template <int... I>
CutlassKernel kernel_of(int config, GemmDType dtype, char transa, std::integer_sequence<int, I...>) {
  CutlassKernel found{};
  const bool bf16 = dtype == GemmDType::bfloat16;
  ((config == I ? (found = bf16 ? cutlass_kernel<I, GemmDType::bfloat16>(transa)
                                : cutlass_kernel<I, GemmDType::float16>(transa),
                   true)
                : false) ||
   ...);
  return found;
}
#endif

// The built kernel of `solution` for `p`. @throws InvalidArgumentError when the build lacks it.
CutlassKernel kernel_for([[maybe_unused]] const CutlassProblem& p, const Solution& solution) {
  [[maybe_unused]] const int config =
      solution.kind == Solution::Kind::cutlass ? config_index(solution.cutlass) : -1;
#if CUDAKIT_HAS_CUTLASS
  if (config >= 0 && (p.dtype == GemmDType::bfloat16 || p.dtype == GemmDType::float16)) {
    return kernel_of(config, p.dtype, p.transa, std::make_integer_sequence<int, kCutlassConfigCount>());
  }
#endif
  throw InvalidArgumentError(
      "tunable::launch_cutlass",
      cudakit::detail::concat(solution.name(), ": this build of cudakit has no such CUTLASS kernel",
                              cutlass_built() ? "" : " (built without CUDAKIT_CUTLASS)"));
}

}  // namespace

bool cutlass_built() noexcept { return CUDAKIT_HAS_CUTLASS != 0; }

bool cutlass_applicable(const GemmKey& key, const Solution& solution, int capability) {
  if (solution.kind != Solution::Kind::cutlass || config_index(solution.cutlass) < 0) return false;
  const int swizzle = solution.cutlass.swizzle;
  if (swizzle != 1 && swizzle != 2 && swizzle != 4 && swizzle != 8) return false;
  if (capability != kCutlassComputeCapability) return false;
  if (key.op != GemmOp::gemm && key.op != GemmOp::gemm_strided_batched) return false;
  if (key.a_type != GemmDType::bfloat16 && key.a_type != GemmDType::float16) return false;
  if (key.b_type != key.a_type || key.c_type != key.a_type || key.tf32 || key.epilogue != Epilogue::none)
    return false;
  if (key.transb != 'n' || (key.transa != 'n' && key.transa != 't')) return false;
  if (key.m <= 16 || key.n <= 16 || key.k < 1) return false;
  if (key.m > INT_MAX || key.n > INT_MAX || key.k > INT_MAX || key.batch < 1 || key.batch > INT_MAX)
    return false;
  const std::size_t bytes = element_size(key.a_type);
  if (key.alignment < 16) return false;
  for (const std::int64_t ld : {key.lda, key.ldb, key.ldc}) {
    if (!is_16_byte_multiple(ld, bytes)) return false;
  }
  if (key.batch > 1) {
    // Each batch's matrix after the previous one's: a TMA descriptor's batch stride of 0 (one B
    // broadcast to every batch) or an overlap is refused by the driver at encode time, which
    // CUTLASS reports only on stderr before launching with the broken descriptor.
    const std::int64_t a_columns = key.transa == 'n' ? key.k : key.m;
    const std::pair<std::int64_t, std::int64_t> strides[] = {{key.stride_a, key.lda * a_columns},
                                                             {key.stride_b, key.ldb * key.n},
                                                             {key.stride_c, key.ldc * key.n}};
    for (const auto& [stride, matrix] : strides) {
      if (stride < matrix || !is_16_byte_multiple(stride, bytes)) return false;
    }
  }
  // The contiguous extents: k of op(A) (transa = t) and of op(B); m of A (transa = n) and of C.
  return is_16_byte_multiple(key.k, bytes) && is_16_byte_multiple(key.m, bytes);
}

std::vector<Solution> cutlass_candidates(const GemmKey& key, int capability) {
  std::vector<Solution> all;
  if (!cutlass_built()) return all;
  for (CutlassConfig config : kCutlassConfigs) {
    for (const int swizzle : kCutlassSwizzles) {
      config.swizzle = swizzle;
      const Solution s = cutlass_solution(config);
      if (cutlass_applicable(key, s, capability)) all.push_back(s);
    }
  }
  return all;
}

CutlassProblem cutlass_problem(const GemmKey& key, const void* a, const void* b, void* c, double alpha,
                               double beta, int device) {
  CutlassProblem p;
  p.dtype = key.a_type;
  p.transa = key.transa;
  p.m = static_cast<int>(key.m);
  p.n = static_cast<int>(key.n);
  p.k = static_cast<int>(key.k);
  p.batch = static_cast<int>(key.batch);
  p.lda = key.lda;
  p.ldb = key.ldb;
  p.ldc = key.ldc;
  if (key.batch > 1) {
    p.stride_a = key.stride_a;
    p.stride_b = key.stride_b;
    p.stride_c = key.stride_c;
  }
  p.a = a;
  p.b = b;
  p.c = c;
  p.alpha = static_cast<float>(alpha);
  p.beta = static_cast<float>(beta);
  p.device = device;
  p.sm_count = key.sm_count;
  return p;
}

std::size_t cutlass_workspace_bytes(const CutlassProblem& p, const Solution& solution) {
  CutlassProblem q = p;
  q.swizzle = solution.cutlass.swizzle;
  return kernel_for(q, solution).workspace_bytes(q);
}

void launch_cutlass(const CutlassProblem& p, const Solution& solution, void* workspace, StreamRef stream) {
  CutlassProblem q = p;
  q.swizzle = solution.cutlass.swizzle;
  kernel_for(q, solution).run(q, workspace, stream.handle());
}

}  // namespace cudakit::tunable::detail
