#include "tunable/detail/gemv.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include "cudakit/core/launch.cuh"

namespace cudakit::tunable::detail {

// Note [Decode GEMMs]
// With m or n at most 16 a GEMM reads a big matrix once and does a few flops per element: it is
// memory-bound, and its speed is the fraction of HBM bandwidth it reaches. cuBLAS's tiles are
// made for the compute-bound case (a 16 x 4096 x 4096 bfloat16 GEMM reaches under a third of
// its bandwidth bound on an H200: notes/figures.md). The big operand is the one whose rows are
// K-contiguous (A with transa = t when n <= 16, B with transb = n when m <= 16); the small one
// (k x s, s <= 16) is read through L1. Three kernels, each a few tuner candidates:
// - Gemv_k (split_k): each warp owns 2-4 rows, the small operand staged in shared memory tile by
//   tile; split-K across blocks with a second pass. Only 2-4 loads in flight per thread and one
//   or two blocks per SM: it stayed near half of the bound in bf16 (notes/figures.md).
// - GemvStream_rR (CUDA cores, every dtype): a block of 8 warps owns R = 4 or 8 rows and its warps
//   split k between them (warp w reads the 32 x 16-byte chunks w, w + 8, ...), so a row count of
//   4096 gives 512-1024 blocks; each thread has R 16-byte loads (__ldcs: streamed, evict-first)
//   in flight per step. The small operand's 16 bytes per column come through L1 (__ldg).
//   Products in float32, reduced across the warp with shuffles and across the block's warps in
//   shared memory in warp order. With s = 16 bf16 a CUDA-core kernel needs about all the FMA
//   rate an H200 has to run at the bandwidth bound (notes/figures.md); hence:
// - GemvMma_rR (tensor cores, float16/bfloat16): mma.sync m16n8k16 with float32 accumulators, a
//   block of 8 warps owning 16 or 32 rows (one or two m16 tiles), its warps splitting k; s padded
//   to 8 or 16 (one or two n8 tiles). A thread (group g = lane / 4, t = lane % 4) loads 16 bytes
//   of rows g and g + 8 at k = 8t..8t+7 of each 32-wide chunk and 16 bytes of the small operand's
//   column g at the same k; the chunk's 32 k values feed two MMAs. The MMA's k order is a
//   permutation of memory's (its k = 2t, 2t+1, 2t+8, 2t+9 are memory's 8t..8t+3, the second MMA
//   the rest), the same for both operands, so the sum is the same and every load is 16 bytes.
//   4 chunks per step (2 with two m-tiles): 8 16-byte loads of the big operand in flight.
// Both newer kernels clamp rows past the end to the last row (their results are not written),
// take the element-wise path for rows or columns not 16-byte aligned and for the last partial
// chunk of k (zeros past k), and reduce deterministically: no atomics, the same sums in the same
// order on every run. Split-K across blocks (k2, k4, ...) writes float partial sums that a second
// kernel adds in split order; within a block the warps' sums are added in warp order.
// The epilogue (alpha, beta, bias, ReLU or GELU) is applied where the final sum is written.
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kSharedBytes = 32 * 1024;

template <class T>
struct Vec;  // 16 bytes of T as floats
template <>
struct Vec<float> {
  static constexpr int n = 4;
  __device__ static void to_float(const uint4& v, float* out) {
    out[0] = __uint_as_float(v.x); out[1] = __uint_as_float(v.y);
    out[2] = __uint_as_float(v.z); out[3] = __uint_as_float(v.w);
  }
};
template <>
struct Vec<__half> {
  static constexpr int n = 8;
  __device__ static void to_float(const uint4& v, float* out) {
    const __half2* h = reinterpret_cast<const __half2*>(&v);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const float2 f = __half22float2(h[i]);
      out[2 * i] = f.x; out[2 * i + 1] = f.y;
    }
  }
};
template <>
struct Vec<__nv_bfloat16> {
  static constexpr int n = 8;
  __device__ static void to_float(const uint4& v, float* out) {
    const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&v);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const float2 f = __bfloat1622float2(h[i]);
      out[2 * i] = f.x; out[2 * i + 1] = f.y;
    }
  }
};

template <class T> __device__ float load_float(const T* p) { return static_cast<float>(*p); }
template <> __device__ float load_float(const __half* p) { return __half2float(*p); }
template <> __device__ float load_float(const __nv_bfloat16* p) { return __bfloat162float(*p); }
template <class T> __device__ T from_float(float v) { return static_cast<T>(v); }
template <> __device__ __half from_float(float v) { return __float2half_rn(v); }
template <> __device__ __nv_bfloat16 from_float(float v) { return __float2bfloat16_rn(v); }

__device__ float apply_epilogue(float acc, float old, float bias, const GemvProblem& p) {
  float v = p.alpha * acc;
  if (p.beta != 0) v += p.beta * old;
  v += bias;
  if (p.epilogue == Epilogue::relu || p.epilogue == Epilogue::bias_relu) v = fmaxf(v, 0.0f);
  if (p.epilogue == Epilogue::gelu || p.epilogue == Epilogue::bias_gelu) {
    // The tanh form, as cuBLASLt's GELU epilogue.
    v = 0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)));
  }
  return v;
}

template <class T>
__device__ void write_output(const GemvProblem& p, std::int64_t b, std::int64_t row, std::int64_t j, float acc) {
  T* out = static_cast<T*>(p.out) + b * p.out_batch_stride + row * p.out_stride_row + j * p.out_stride_s;
  const float old = p.beta != 0 ? load_float(out) : 0.0f;
  float bias = 0;
  if (p.bias) bias = load_float(static_cast<const T*>(p.bias) + (p.bias_per_row ? row : j));
  *out = from_float<T>(apply_epilogue(acc, old, bias, p));
}

// grid: (row groups, splits, batch). See Note [Decode GEMMs].
template <class T, int S, int R>
__global__ void __launch_bounds__(kThreads) gemv_kernel(GemvProblem p, int splits, float* partial) {
  constexpr int V = Vec<T>::n;
  constexpr int KT = (kSharedBytes / (S * int(sizeof(T)))) / (32 * V) * (32 * V) > 4096
                         ? 4096
                         : (kSharedBytes / (S * int(sizeof(T)))) / (32 * V) * (32 * V);
  __shared__ __align__(16) T xs[S][KT];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const std::int64_t b = blockIdx.z;
  const std::int64_t row0 = (static_cast<std::int64_t>(blockIdx.x) * kWarps + warp) * R;
  const int split = blockIdx.y;
  // This split's part of k, a multiple of V long.
  const std::int64_t per_split = ((p.k + splits - 1) / splits + V - 1) / V * V;
  const std::int64_t k_begin = split * per_split;
  const std::int64_t k_end = p.k < k_begin + per_split ? p.k : k_begin + per_split;

  const T* big = static_cast<const T*>(p.big) + b * p.big_batch_stride;
  const T* small = static_cast<const T*>(p.small) + b * p.small_batch_stride;
  float acc[R][S];
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int j = 0; j < S; ++j) acc[r][j] = 0;

  for (std::int64_t tile = k_begin; tile < k_end; tile += KT) {
    const int len = static_cast<int>(k_end - tile < KT ? k_end - tile : KT);
    __syncthreads();
    for (int i = threadIdx.x; i < S * KT; i += kThreads) {
      const int j = i / KT, l = i % KT;
      xs[j][l] = (j < p.s && l < len) ? small[(tile + l) * p.small_stride_k + j * p.small_stride_s]
                                      : from_float<T>(0.0f);
    }
    __syncthreads();
    for (int l = lane * V; l < len; l += 32 * V) {
      // R rows' 16 bytes first (R loads in flight), then each column of the small operand once
      // from shared memory for all R rows: registers for R x S sums, R x V weights, V inputs.
      float w[R][V];
#pragma unroll
      for (int r = 0; r < R; ++r) {
        if (row0 + r < p.rows) {
          Vec<T>::to_float(__ldcs(reinterpret_cast<const uint4*>(big + (row0 + r) * p.big_ld + tile + l)), w[r]);
        } else {
#pragma unroll
          for (int v = 0; v < V; ++v) w[r][v] = 0;
        }
      }
#pragma unroll
      for (int j = 0; j < S; ++j) {
        float x[V];
        Vec<T>::to_float(*reinterpret_cast<const uint4*>(&xs[j][l]), x);
#pragma unroll
        for (int r = 0; r < R; ++r)
#pragma unroll
          for (int v = 0; v < V; ++v) acc[r][j] = fmaf(w[r][v], x[v], acc[r][j]);
      }
    }
  }
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int j = 0; j < S; ++j)
#pragma unroll
      for (int offset = 16; offset > 0; offset /= 2) acc[r][j] += __shfl_xor_sync(0xffffffffu, acc[r][j], offset);
  if (lane != 0) return;
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const std::int64_t row = row0 + r;
    if (row >= p.rows) break;
#pragma unroll
    for (int j = 0; j < S; ++j) {
      if (j >= p.s) break;
      if (splits == 1) {
        write_output<T>(p, b, row, j, acc[r][j]);
      } else {
        partial[((b * splits + split) * p.rows + row) * p.s + j] = acc[r][j];
      }
    }
  }
}

// Adds the splits' partial sums in split order and writes the output. One thread per element.
template <class T>
__global__ void gemv_reduce_kernel(GemvProblem p, int splits, const float* partial) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t per_batch = p.rows * p.s;
  if (i >= per_batch * p.batch) return;
  const std::int64_t b = i / per_batch, row = (i % per_batch) / p.s, j = i % p.s;
  float sum = 0;
  for (int split = 0; split < splits; ++split) sum += partial[((b * splits + split) * p.rows + row) * p.s + j];
  write_output<T>(p, b, row, j, sum);
}

// The final sum of (row, j): the output with the epilogue, or this split's partial sum.
template <class T>
__device__ void finish(const GemvProblem& p, int splits, float* partial, std::int64_t b, int split, std::int64_t row,
                       std::int64_t j, float sum) {
  if (splits == 1) {
    write_output<T>(p, b, row, j, sum);
  } else {
    partial[((b * splits + split) * p.rows + row) * p.s + j] = sum;
  }
}

// This split's part of k: [begin, end), begin a multiple of `multiple` (so that 16-byte loads of
// aligned rows stay aligned).
struct KRange {
  std::int64_t begin, end;
};
__device__ KRange split_range(std::int64_t k, int splits, int split, std::int64_t multiple) {
  const std::int64_t per_split = ((k + splits - 1) / splits + multiple - 1) / multiple * multiple;
  const std::int64_t begin = split * per_split;
  return {begin, k < begin + per_split ? k : begin + per_split};
}

// Up to Vec<T>::n elements `stride` apart from `p` as 16 bytes, zeros from element `avail` on
// (avail <= 0: all zeros). For rows or columns that are not 16-byte aligned and for k's tail.
template <class T>
__device__ uint4 load_elements(const T* p, std::int64_t stride, std::int64_t avail) {
  constexpr int V = Vec<T>::n;
  uint4 out = make_uint4(0, 0, 0, 0);
  T* e = reinterpret_cast<T*>(&out);
#pragma unroll
  for (int v = 0; v < V; ++v) {
    if (v < avail) e[v] = p[v * stride];
  }
  return out;
}

// 16 bytes of the small operand's column at `col` (null: past s, zeros), k index kk.
template <class T>
__device__ uint4 load_small(const GemvProblem& p, const T* col, std::int64_t kk, std::int64_t avail, bool full) {
  if (!col) return make_uint4(0, 0, 0, 0);
  if (full && p.small_vector) return __ldg(reinterpret_cast<const uint4*>(col + kk));
  return load_elements(col + kk * p.small_stride_k, p.small_stride_k, avail);
}

// grid: (ceil(rows / R), splits, batch); 8 warps. See Note [Decode GEMMs] (GemvStream).
template <class T, int S, int R, bool VecBig>
__global__ void __launch_bounds__(kThreads) gemv_stream_kernel(GemvProblem p, int splits, float* partial) {
  constexpr int V = Vec<T>::n;
  constexpr int kChunk = 32 * V;  // k per warp and step
  // float32 needs no conversion: one column of x at a time (fewer registers); 16-bit types convert
  // each weight once and keep every column's V inputs.
  constexpr int XG = sizeof(T) == 4 ? 1 : S;
  __shared__ float sums[kWarps][R * S];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const std::int64_t b = blockIdx.z;
  const std::int64_t row0 = static_cast<std::int64_t>(blockIdx.x) * R;
  const int split = blockIdx.y;
  const KRange range = split_range(p.k, splits, split, kChunk);
  const T* big = static_cast<const T*>(p.big) + b * p.big_batch_stride;
  const T* small = static_cast<const T*>(p.small) + b * p.small_batch_stride;
  const T* rows[R];
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const std::int64_t row = row0 + r < p.rows ? row0 + r : p.rows - 1;  // clamped: read, not written
    rows[r] = big + row * p.big_ld;
  }
  float acc[R][S];
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int j = 0; j < S; ++j) acc[r][j] = 0;

  for (std::int64_t k0 = range.begin + warp * kChunk; k0 < range.end; k0 += kWarps * kChunk) {
    const std::int64_t kk = k0 + lane * V;
    const std::int64_t avail = range.end - kk;
    const bool full = k0 + kChunk <= range.end;  // the same for the whole warp
    uint4 raw[R];
    if (VecBig && full) {
#pragma unroll
      for (int r = 0; r < R; ++r) raw[r] = __ldcs(reinterpret_cast<const uint4*>(rows[r] + kk));
    } else {
#pragma unroll
      for (int r = 0; r < R; ++r) raw[r] = load_elements(rows[r] + kk, 1, avail);
    }
#pragma unroll
    for (int j0 = 0; j0 < S; j0 += XG) {
      float x[XG][V];
#pragma unroll
      for (int jj = 0; jj < XG; ++jj) {
        const int j = j0 + jj;
        const T* col = j < p.s ? small + j * p.small_stride_s : nullptr;
        Vec<T>::to_float(load_small(p, col, kk, avail, full), x[jj]);
      }
#pragma unroll
      for (int r = 0; r < R; ++r) {
        float w[V];
        Vec<T>::to_float(raw[r], w);
#pragma unroll
        for (int jj = 0; jj < XG; ++jj)
#pragma unroll
          for (int v = 0; v < V; ++v) acc[r][j0 + jj] = fmaf(w[v], x[jj][v], acc[r][j0 + jj]);
      }
    }
  }
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int j = 0; j < S; ++j) {
#pragma unroll
      for (int offset = 16; offset > 0; offset /= 2) acc[r][j] += __shfl_xor_sync(0xffffffffu, acc[r][j], offset);
      if (lane == 0) sums[warp][r * S + j] = acc[r][j];
    }
  __syncthreads();
  for (int i = threadIdx.x; i < R * S; i += kThreads) {
    const int r = i / S, j = i % S;
    const std::int64_t row = row0 + r;
    if (row >= p.rows || j >= p.s) continue;
    float sum = 0;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) sum += sums[w][i];  // warp order: the same sum every run
    finish<T>(p, splits, partial, b, split, row, j, sum);
  }
}

// D += A B for one m16n8k16 tile: a0-a3 and b0-b1 as the PTX ISA lays out the fragments.
template <class T>
__device__ void mma_16816(float (&d)[4], unsigned a0, unsigned a1, unsigned a2, unsigned a3, unsigned b0,
                          unsigned b1) {
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  } else {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  }
}

// grid: (ceil(rows / (16 MT)), splits, batch); 8 warps; NT n8 tiles of s. See Note [Decode GEMMs]
// (GemvMma).
template <class T, int NT, int MT, bool VecBig>
__global__ void __launch_bounds__(kThreads) gemv_mma_kernel(GemvProblem p, int splits, float* partial) {
  constexpr int U = 4 / MT;        // 32-wide chunks per warp and step
  constexpr int kSpan = 32 * U;    // k per warp and step
  constexpr int kValues = MT * NT * 4;  // accumulators per thread
  __shared__ float sums[kWarps][kValues][32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int g = lane / 4, t = lane % 4;
  const std::int64_t b = blockIdx.z;
  const std::int64_t row0 = static_cast<std::int64_t>(blockIdx.x) * (16 * MT);
  const int split = blockIdx.y;
  const KRange range = split_range(p.k, splits, split, kSpan);
  const T* big = static_cast<const T*>(p.big) + b * p.big_batch_stride;
  const T* small = static_cast<const T*>(p.small) + b * p.small_batch_stride;
  const T* lo[MT];
  const T* hi[MT];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) {
    const std::int64_t r_lo = row0 + 16 * mt + g, r_hi = r_lo + 8;  // clamped: read, not written
    lo[mt] = big + (r_lo < p.rows ? r_lo : p.rows - 1) * p.big_ld;
    hi[mt] = big + (r_hi < p.rows ? r_hi : p.rows - 1) * p.big_ld;
  }
  const T* cols[NT];
#pragma unroll
  for (int nt = 0; nt < NT; ++nt) {
    const int j = 8 * nt + g;
    cols[nt] = j < p.s ? small + j * p.small_stride_s : nullptr;
  }
  float acc[MT][NT][4];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
      for (int i = 0; i < 4; ++i) acc[mt][nt][i] = 0;

  for (std::int64_t k0 = range.begin + warp * kSpan; k0 < range.end; k0 += kWarps * kSpan) {
    const bool full = k0 + kSpan <= range.end;  // the same for the whole warp
    uint4 a_lo[U][MT], a_hi[U][MT], x[U][NT];
    if (VecBig && full) {
#pragma unroll
      for (int u = 0; u < U; ++u)
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
          const std::int64_t kk = k0 + 32 * u + 8 * t;
          a_lo[u][mt] = __ldcs(reinterpret_cast<const uint4*>(lo[mt] + kk));
          a_hi[u][mt] = __ldcs(reinterpret_cast<const uint4*>(hi[mt] + kk));
        }
    } else {
#pragma unroll
      for (int u = 0; u < U; ++u)
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
          const std::int64_t kk = k0 + 32 * u + 8 * t;
          a_lo[u][mt] = load_elements(lo[mt] + kk, 1, range.end - kk);
          a_hi[u][mt] = load_elements(hi[mt] + kk, 1, range.end - kk);
        }
    }
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) {
        const std::int64_t kk = k0 + 32 * u + 8 * t;
        x[u][nt] = load_small(p, cols[nt], kk, range.end - kk, full);
      }
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int nt = 0; nt < NT; ++nt) {
          // Memory's k = 8t..8t+3 (words x, y), then 8t+4..8t+7 (words z, w).
          mma_16816<T>(acc[mt][nt], a_lo[u][mt].x, a_hi[u][mt].x, a_lo[u][mt].y, a_hi[u][mt].y, x[u][nt].x,
                       x[u][nt].y);
          mma_16816<T>(acc[mt][nt], a_lo[u][mt].z, a_hi[u][mt].z, a_lo[u][mt].w, a_hi[u][mt].w, x[u][nt].z,
                       x[u][nt].w);
        }
  }
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
      for (int i = 0; i < 4; ++i) sums[warp][(mt * NT + nt) * 4 + i][lane] = acc[mt][nt][i];
  __syncthreads();
  for (int e = threadIdx.x; e < kValues * 32; e += kThreads) {
    const int value = e / 32, owner = e % 32;  // the accumulator and the lane that held it
    const int mt = value / (NT * 4), nt = (value / 4) % NT, i = value % 4;
    // The C fragment: c0, c1 at row g, c2, c3 at row g + 8; columns 2t and 2t + 1.
    const std::int64_t row = row0 + 16 * mt + owner / 4 + (i >= 2 ? 8 : 0);
    const int j = 8 * nt + 2 * (owner % 4) + (i & 1);
    if (row >= p.rows || j >= p.s) continue;
    float sum = 0;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) sum += sums[w][value][owner];  // warp order: the same sum every run
    finish<T>(p, splits, partial, b, split, row, j, sum);
  }
}

int padded_s(std::int64_t s) { return s <= 1 ? 1 : s <= 2 ? 2 : s <= 4 ? 4 : s <= 8 ? 8 : 16; }

// What the GEMV's kernels touch, for the trace hooks: the GEMM's operands and the workspace
// (each kernel declares them all: the first writes the workspace or the output, the second reads
// the one and writes the other).
struct GemvAccesses {
  std::span<const MemoryAccess> operands;
  MemoryAccess workspace;
  std::vector<MemoryAccess> operator()() const {
    std::vector<MemoryAccess> all(operands.begin(), operands.end());
    all.push_back(workspace);
    return all;
  }
};

template <class T>
void launch_reduce(const GemvProblem& p, int splits, const float* partial, StreamRef stream, const GemvAccesses& accesses) {
  const std::int64_t elements = p.rows * p.s * p.batch;
  launch_kernel("tunable.gemv_reduce", gemv_reduce_kernel<T>,
                {dim3(static_cast<unsigned>((elements + 255) / 256)), dim3(256)}, stream, with_accesses(accesses), p, splits, partial);
}

dim3 grid_of(const GemvProblem& p, std::int64_t rows_per_block, int splits) {
  return dim3(static_cast<unsigned>((p.rows + rows_per_block - 1) / rows_per_block), static_cast<unsigned>(splits),
              static_cast<unsigned>(p.batch));
}

template <class T, int S>
void launch_split_k(const GemvProblem& p, int splits, float* partial, StreamRef stream, const GemvAccesses& accesses) {
  constexpr int R = S >= 8 ? 4 : 2;
  launch_kernel("tunable.gemv", gemv_kernel<T, S, R>, {grid_of(p, std::int64_t{kWarps} * R, splits), dim3(kThreads)},
                stream, with_accesses(accesses), p, splits, partial);
}

template <class T, int S, int R>
void launch_stream(const GemvProblem& p, int splits, float* partial, StreamRef stream, const GemvAccesses& accesses) {
  const KernelGeometry geometry{grid_of(p, R, splits), dim3(kThreads)};
  if (p.big_vector) {
    launch_kernel("tunable.gemv_stream", gemv_stream_kernel<T, S, R, true>, geometry, stream, with_accesses(accesses), p, splits, partial);
  } else {
    launch_kernel("tunable.gemv_stream", gemv_stream_kernel<T, S, R, false>, geometry, stream, with_accesses(accesses), p, splits, partial);
  }
}

template <class T, int NT, int MT>
void launch_mma(const GemvProblem& p, int splits, float* partial, StreamRef stream, const GemvAccesses& accesses) {
  const KernelGeometry geometry{grid_of(p, 16 * MT, splits), dim3(kThreads)};
  if (p.big_vector) {
    launch_kernel("tunable.gemv_mma", gemv_mma_kernel<T, NT, MT, true>, geometry, stream, with_accesses(accesses), p, splits, partial);
  } else {
    launch_kernel("tunable.gemv_mma", gemv_mma_kernel<T, NT, MT, false>, geometry, stream, with_accesses(accesses), p, splits, partial);
  }
}

// The kernel of `solution` for dtype T: the S (padded s) and rows-per-block instantiations.
template <class T>
void launch_typed(const GemvProblem& p, const Solution& solution, float* partial, StreamRef stream,
                  const GemvAccesses& accesses) {
  const int splits = solution.gemv_splits;
  const int s = padded_s(p.s);
  switch (solution.gemv_kernel) {
    case GemvKernel::split_k:
      switch (s) {
        case 1: launch_split_k<T, 1>(p, splits, partial, stream, accesses); break;
        case 2: launch_split_k<T, 2>(p, splits, partial, stream, accesses); break;
        case 4: launch_split_k<T, 4>(p, splits, partial, stream, accesses); break;
        case 8: launch_split_k<T, 8>(p, splits, partial, stream, accesses); break;
        default: launch_split_k<T, 16>(p, splits, partial, stream, accesses); break;
      }
      break;
    case GemvKernel::stream: {
      const bool eight = solution.gemv_rows == 8;
      switch (s) {
        case 1: eight ? launch_stream<T, 1, 8>(p, splits, partial, stream, accesses) : launch_stream<T, 1, 4>(p, splits, partial, stream, accesses); break;
        case 2: eight ? launch_stream<T, 2, 8>(p, splits, partial, stream, accesses) : launch_stream<T, 2, 4>(p, splits, partial, stream, accesses); break;
        case 4: eight ? launch_stream<T, 4, 8>(p, splits, partial, stream, accesses) : launch_stream<T, 4, 4>(p, splits, partial, stream, accesses); break;
        case 8: eight ? launch_stream<T, 8, 8>(p, splits, partial, stream, accesses) : launch_stream<T, 8, 4>(p, splits, partial, stream, accesses); break;
        default: launch_stream<T, 16, 4>(p, splits, partial, stream, accesses); break;  // r8 is not offered for s > 8
      }
      break;
    }
    case GemvKernel::mma:
      if constexpr (sizeof(T) == 2) {
        const bool two = solution.gemv_rows == 32;
        if (s <= 8) {
          two ? launch_mma<T, 1, 2>(p, splits, partial, stream, accesses) : launch_mma<T, 1, 1>(p, splits, partial, stream, accesses);
        } else {
          two ? launch_mma<T, 2, 2>(p, splits, partial, stream, accesses) : launch_mma<T, 2, 1>(p, splits, partial, stream, accesses);
        }
      }
      break;
  }
  if (splits > 1) launch_reduce<T>(p, splits, partial, stream, accesses);
}

// Which operand is the big one: A when n <= 16 and transa = t (rows: C's rows), B when m <= 16
// and transb = n (rows: C's columns); with both possible, the one with more rows.
enum class BigOperand { none, a, b };
BigOperand big_operand(const GemmKey& key) {
  const bool a = key.n <= 16 && key.transa == 't', b = key.m <= 16 && key.transb == 'n';
  if (a && b) return key.m >= key.n ? BigOperand::a : BigOperand::b;
  return a ? BigOperand::a : b ? BigOperand::b : BigOperand::none;
}

std::int64_t per_16_bytes(GemmDType t) { return 16 / static_cast<std::int64_t>(element_size(t)); }

// Whether the big operand's rows all start 16-byte aligned.
bool big_rows_aligned(const GemmKey& key, BigOperand big) {
  const std::int64_t v = per_16_bytes(key.a_type);
  const std::int64_t ld = big == BigOperand::a ? key.lda : key.ldb;
  const std::int64_t stride = big == BigOperand::a ? key.stride_a : key.stride_b;
  return key.alignment >= 16 && ld % v == 0 && stride % v == 0;
}

}  // namespace

bool gemv_applicable(const GemmKey& key, const Solution& solution) {
  if (solution.kind != Solution::Kind::gemv || solution.gemv_splits < 1 || solution.gemv_splits > 64) return false;
  if (key.op == GemmOp::scaled_gemm || key.tf32) return false;
  if (key.a_type != GemmDType::float32 && key.a_type != GemmDType::float16 && key.a_type != GemmDType::bfloat16) {
    return false;
  }
  if (key.m == 0 || key.n == 0 || key.k == 0) return false;
  if (key.batch > 65535) return false;  // the batch is the grid's z dimension
  if (key.alignment < static_cast<int>(element_size(key.a_type))) return false;  // not even element-aligned
  const BigOperand big = big_operand(key);
  if (big == BigOperand::none) return false;
  const std::int64_t rows = big == BigOperand::a ? key.m : key.n;
  const int s = padded_s(big == BigOperand::a ? key.n : key.m);
  switch (solution.gemv_kernel) {
    case GemvKernel::split_k:
      return solution.gemv_rows == 0 && big_rows_aligned(key, big) && key.k % per_16_bytes(key.a_type) == 0;
    case GemvKernel::stream:
      if (solution.gemv_rows != 4 && solution.gemv_rows != 8) return false;
      if (solution.gemv_rows == 8 && s > 8) return false;
      return (rows + solution.gemv_rows - 1) / solution.gemv_rows <= INT32_MAX;
    case GemvKernel::mma:
      if (key.a_type == GemmDType::float32) return false;
      if (solution.gemv_rows != 16 && solution.gemv_rows != 32) return false;
      return (rows + solution.gemv_rows - 1) / solution.gemv_rows <= INT32_MAX;
  }
  return false;
}

std::vector<Solution> gemv_candidates(const GemmKey& key) {
  std::vector<Solution> all;
  const auto add = [&](GemvKernel kernel, int rows, int splits) {
    const Solution s = Solution::gemv(kernel, rows, splits);
    if (gemv_applicable(key, s)) all.push_back(s);
  };
  for (const int splits : {1, 2, 4, 8}) add(GemvKernel::split_k, 0, splits);
  // Split-K across blocks pays a second kernel (~2-3 us at these sizes): worth it only where the
  // rows leave the SMs without enough blocks (GemvMma_r32 has 128 blocks for 4096 rows), so k2
  // and k4 are offered beside k1.
  // On CUDA cores 16-bit types need a conversion per weight and s FMAs: past s = 4 the tensor
  // cores' kernel is the one that can keep up with HBM (registers: 166-252 a thread there).
  const bool stream_fits = key.a_type == GemmDType::float32 || std::min(key.m, key.n) <= 4;
  for (const int splits : {1, 2, 4}) {
    if (stream_fits) {
      add(GemvKernel::stream, 4, splits);
      add(GemvKernel::stream, 8, splits);
    }
    add(GemvKernel::mma, 16, splits);
    add(GemvKernel::mma, 32, splits);
  }
  return all;
}

GemvProblem gemv_problem(const GemmKey& key, const void* a, const void* b, void* c, const void* bias,
                         double alpha, double beta) {
  GemvProblem p;
  p.dtype = key.a_type;
  p.k = key.k;
  p.batch = key.batch;
  p.out = c;
  p.out_batch_stride = key.stride_c;
  p.bias = has_bias(key.epilogue) ? bias : nullptr;
  p.epilogue = key.epilogue;
  p.alpha = static_cast<float>(alpha);
  p.beta = static_cast<float>(beta);
  const BigOperand big = big_operand(key);
  p.big_vector = big_rows_aligned(key, big);
  const std::int64_t v = per_16_bytes(key.a_type);
  if (big == BigOperand::a) {
    // Rows are C's rows i (op(A)'s rows, A's columns as stored); the small operand is op(B).
    p.rows = key.m;
    p.s = key.n;
    p.big = a;
    p.big_ld = key.lda;
    p.big_batch_stride = key.stride_a;
    p.small = b;
    p.small_stride_k = key.transb == 'n' ? 1 : key.ldb;
    p.small_stride_s = key.transb == 'n' ? key.ldb : 1;
    p.small_batch_stride = key.stride_b;
    p.out_stride_row = 1;
    p.out_stride_s = key.ldc;
    p.bias_per_row = true;
  } else {
    // Rows are C's columns j (op(B)'s columns); the small operand is op(A)^T.
    p.rows = key.n;
    p.s = key.m;
    p.big = b;
    p.big_ld = key.ldb;
    p.big_batch_stride = key.stride_b;
    p.small = a;
    p.small_stride_k = key.transa == 'n' ? key.lda : 1;
    p.small_stride_s = key.transa == 'n' ? 1 : key.lda;
    p.small_batch_stride = key.stride_a;
    p.out_stride_row = key.ldc;
    p.out_stride_s = 1;
    p.bias_per_row = false;
  }
  p.small_vector = key.alignment >= 16 && p.small_stride_k == 1 && p.small_stride_s % v == 0 &&
                   p.small_batch_stride % v == 0;
  return p;
}

std::size_t gemv_workspace_bytes(const GemvProblem& p, int splits) {
  if (splits <= 1) return 0;
  return static_cast<std::size_t>(p.batch) * static_cast<std::size_t>(splits) * static_cast<std::size_t>(p.rows) *
         static_cast<std::size_t>(p.s) * sizeof(float);
}

void launch_gemv(const GemvProblem& p, const Solution& solution, void* workspace, StreamRef stream,
                 std::span<const MemoryAccess> operands) {
  float* partial = static_cast<float*>(workspace);
  const GemvAccesses accesses{operands, {workspace, gemv_workspace_bytes(p, solution.gemv_splits),
                                         MemoryAccess::Mode::read_write, "workspace"}};
  switch (p.dtype) {
    case GemmDType::float16: return launch_typed<__half>(p, solution, partial, stream, accesses);
    case GemmDType::bfloat16: return launch_typed<__nv_bfloat16>(p, solution, partial, stream, accesses);
    default: return launch_typed<float>(p, solution, partial, stream, accesses);
  }
}

}  // namespace cudakit::tunable::detail
