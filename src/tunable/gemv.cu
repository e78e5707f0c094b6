#include "tunable/detail/gemv.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <vector>

#include "cudakit/core/launch.cuh"

namespace cudakit::tunable::detail {

// Note [Decode GEMMs]
// With m or n at most 16 a GEMM reads a big matrix once and does a few flops per element: it is
// memory-bound, and its speed is the fraction of HBM bandwidth it reaches. cuBLAS's tiles are
// made for the compute-bound case (a 16 x 4096 x 4096 bfloat16 GEMM reaches 20 TFLOP/s of a
// ~67 TFLOP/s bandwidth bound on an H200). This kernel streams the big matrix instead:
// - Each warp owns R rows of the big matrix (the operand whose rows are K-contiguous: A with
//   transa = t when n <= 16, B with transb = n when m <= 16) and reads them with 16-byte loads
//   that bypass L1 (__ldcs: read once), R rows at a time so that each load of the small operand
//   from shared memory serves R rows.
// - The small operand (k x s, s <= 16) is staged in shared memory tile by tile, in its own dtype,
//   so that a lane's 16 bytes of it line up with its 16 bytes of each row.
// - Products accumulate in float32 (as cuBLAS's), reduced across the warp with shuffles.
// - Split-K: with few rows (few warps) the loads in flight do not cover HBM's latency, so k is
//   cut into `splits` parts whose float partial sums a second kernel adds (in a fixed order:
//   results do not depend on timing). The tuner tries 1, 2, 4 and 8 splits.
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
        partial[((b * splits + split) * p.rows + row) * S + j] = acc[r][j];
      }
    }
  }
}

// Adds the splits' partial sums in split order and writes the output. One thread per element.
template <class T, int S>
__global__ void gemv_reduce_kernel(GemvProblem p, int splits, const float* partial) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t per_batch = p.rows * p.s;
  if (i >= per_batch * p.batch) return;
  const std::int64_t b = i / per_batch, row = (i % per_batch) / p.s, j = i % p.s;
  float sum = 0;
  for (int split = 0; split < splits; ++split) sum += partial[((b * splits + split) * p.rows + row) * S + j];
  write_output<T>(p, b, row, j, sum);
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

template <class T, int S>
void launch_typed(const GemvProblem& p, int splits, float* partial, StreamRef stream, const GemvAccesses& accesses) {
  constexpr int R = S >= 8 ? 4 : 2;
  const std::int64_t groups = (p.rows + std::int64_t{kWarps} * R - 1) / (std::int64_t{kWarps} * R);
  const dim3 grid(static_cast<unsigned>(groups), static_cast<unsigned>(splits), static_cast<unsigned>(p.batch));
  launch_kernel("tunable.gemv", gemv_kernel<T, S, R>, {grid, dim3(kThreads)}, stream, with_accesses(accesses), p,
                splits, partial);
  if (splits > 1) {
    const std::int64_t elements = p.rows * p.s * p.batch;
    launch_kernel("tunable.gemv_reduce", gemv_reduce_kernel<T, S>,
                  {dim3(static_cast<unsigned>((elements + 255) / 256)), dim3(256)}, stream, with_accesses(accesses), p,
                  splits, static_cast<const float*>(partial));
  }
}

template <class T>
void launch_for_s(const GemvProblem& p, int splits, float* partial, StreamRef stream, const GemvAccesses& accesses) {
  switch (padded_s(p.s)) {
    case 1: return launch_typed<T, 1>(p, splits, partial, stream, accesses);
    case 2: return launch_typed<T, 2>(p, splits, partial, stream, accesses);
    case 4: return launch_typed<T, 4>(p, splits, partial, stream, accesses);
    case 8: return launch_typed<T, 8>(p, splits, partial, stream, accesses);
    default: return launch_typed<T, 16>(p, splits, partial, stream, accesses);
  }
}

}  // namespace

bool gemv_applicable(const GemmKey& key) {
  if (key.op == GemmOp::scaled_gemm || key.tf32) return false;
  if (key.a_type != GemmDType::float32 && key.a_type != GemmDType::float16 && key.a_type != GemmDType::bfloat16) {
    return false;
  }
  if (key.m == 0 || key.n == 0 || key.k == 0 || key.alignment < 16) return false;
  if (key.batch > 65535) return false;  // the batch is the grid's z dimension
  const std::int64_t per_16_bytes = 16 / static_cast<std::int64_t>(element_size(key.a_type));
  if (key.k % per_16_bytes != 0) return false;
  const bool a_big = key.n <= 16 && key.transa == 't' && key.lda % per_16_bytes == 0 &&
                     key.stride_a % per_16_bytes == 0;
  const bool b_big = key.m <= 16 && key.transb == 'n' && key.ldb % per_16_bytes == 0 &&
                     key.stride_b % per_16_bytes == 0;
  return a_big || b_big;
}

GemvProblem gemv_problem(const GemmKey& key, const void* a, const void* b, void* c, const void* bias,
                         double alpha, double beta) {
  const std::int64_t per_16_bytes = 16 / static_cast<std::int64_t>(element_size(key.a_type));
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
  const bool a_big = key.n <= 16 && key.transa == 't' && key.lda % per_16_bytes == 0 &&
                     key.stride_a % per_16_bytes == 0;
  if (a_big) {
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
  return p;
}

std::size_t gemv_workspace_bytes(const GemvProblem& p, int splits) {
  if (splits <= 1) return 0;
  return static_cast<std::size_t>(p.batch) * static_cast<std::size_t>(splits) * static_cast<std::size_t>(p.rows) *
         static_cast<std::size_t>(padded_s(p.s)) * sizeof(float);
}

void launch_gemv(const GemvProblem& p, int splits, void* workspace, StreamRef stream,
                 std::span<const MemoryAccess> operands) {
  float* partial = static_cast<float*>(workspace);
  const GemvAccesses accesses{operands, {workspace, gemv_workspace_bytes(p, splits), MemoryAccess::Mode::read_write,
                                         "workspace"}};
  switch (p.dtype) {
    case GemmDType::float16: return launch_for_s<__half>(p, splits, partial, stream, accesses);
    case GemmDType::bfloat16: return launch_for_s<__nv_bfloat16>(p, splits, partial, stream, accesses);
    default: return launch_for_s<float>(p, splits, partial, stream, accesses);
  }
}

}  // namespace cudakit::tunable::detail
