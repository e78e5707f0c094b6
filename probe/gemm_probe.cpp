// probe/gemm_probe.cpp: a shared library that probe/gemm_compare.py loads with ctypes, so that
// cudakit's GEMM (Default and tuned), cuBLAS called as torch calls it, and cuBLASLt's heuristic
// choices run in the same process as torch.matmul, on torch's tensors and stream, under torch's
// profiler (which names every kernel of the process). Built on the GPU machine by
// probe/gemm_compare.sh against gpu-bundle/lib/libcudakit.so and the repository's headers.
//
// Every entry point takes the problem in cuBLAS's column-major terms (m, n, k, transa, transb,
// lda, ldb, ldc, batch strides), runs it `iters` times on `stream` between two events and writes
// the mean milliseconds; 0 on success, else -1 with the message in `err`.
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "cudakit/core/stream_ref.hpp"
#include "cudakit/memory/device_allocator.hpp"
#include "cudakit/tunable/gemm.hpp"
#include "cudakit/tunable/tunable.hpp"

namespace {

namespace t = cudakit::tunable;

struct Problem {
  int dtype;  // 0 f32, 1 f16, 2 bf16, 3 e4m3 (scaled, bf16 out)
  char transa, transb;
  long long m, n, k, lda, ldb, ldc, batch, sa, sb, sc;
};

void put(char* err, int len, const std::string& s) {
  if (err && len > 0) std::snprintf(err, static_cast<std::size_t>(len), "%s", s.c_str());
}

template <class F>
int timed(cudaStream_t stream, int iters, float* ms, char* err, int len, F&& call) {
  try {
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    cudaEventRecord(e0, stream);
    for (int i = 0; i < iters; ++i) call();
    cudaEventRecord(e1, stream);
    cudaEventSynchronize(e1);
    float total = 0;
    cudaEventElapsedTime(&total, e0, e1);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    if (ms) *ms = iters > 0 ? total / static_cast<float>(iters) : 0.f;
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) {
      put(err, len, cudaGetErrorString(e));
      return -1;
    }
    return 0;
  } catch (const std::exception& e) {
    put(err, len, e.what());
    return -1;
  }
}

cudaDataType_t ab_type(int d) {
  switch (d) {
    case 0: return CUDA_R_32F;
    case 1: return CUDA_R_16F;
    case 2: return CUDA_R_16BF;
    default: return CUDA_R_8F_E4M3;
  }
}
cudaDataType_t c_type(int d) { return d == 3 ? CUDA_R_16BF : ab_type(d); }

cublasLtHandle_t lt() {
  static cublasLtHandle_t h = [] {
    cublasLtHandle_t x = nullptr;
    cublasLtCreate(&x);
    return x;
  }();
  return h;
}

void* lt_workspace(std::size_t bytes) {
  static void* p = nullptr;
  static std::size_t have = 0;
  if (have < bytes) {
    if (p) cudaFree(p);
    cudaMalloc(&p, bytes);
    have = bytes;
  }
  return p;
}

unsigned alignment_of(const void* p) {
  unsigned a = 256;
  while (a > 1 && reinterpret_cast<std::uintptr_t>(p) % a) a /= 2;
  return a;
}

struct LtProblem {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  explicit LtProblem(const Problem& p, const float* scale_a, const float* scale_b, int fast_accum) {
    const cublasComputeType_t compute = p.dtype == 0 ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_32F;
    cublasLtMatmulDescCreate(&op, compute, CUDA_R_32F);
    const cublasOperation_t ta = p.transa == 't' ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t tb = p.transb == 't' ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta));
    cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb));
    if (p.dtype == 3) {
      cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &scale_a, sizeof(scale_a));
      cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &scale_b, sizeof(scale_b));
      const std::int8_t fast = static_cast<std::int8_t>(fast_accum);
      cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof(fast));
    }
    const auto layout = [&](cudaDataType_t type, long long rows, long long cols, long long ld, long long stride) {
      cublasLtMatrixLayout_t l = nullptr;
      cublasLtMatrixLayoutCreate(&l, type, static_cast<std::uint64_t>(rows), static_cast<std::uint64_t>(cols), ld);
      if (p.batch > 1) {
        const int count = static_cast<int>(p.batch);
        cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count));
        const std::int64_t s = stride;
        cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &s, sizeof(s));
      }
      return l;
    };
    a = layout(ab_type(p.dtype), p.transa == 'n' ? p.m : p.k, p.transa == 'n' ? p.k : p.m, p.lda, p.sa);
    b = layout(ab_type(p.dtype), p.transb == 'n' ? p.k : p.n, p.transb == 'n' ? p.n : p.k, p.ldb, p.sb);
    c = layout(c_type(p.dtype), p.m, p.n, p.ldc, p.sc);
  }
  ~LtProblem() {
    cublasLtMatrixLayoutDestroy(a);
    cublasLtMatrixLayoutDestroy(b);
    cublasLtMatrixLayoutDestroy(c);
    cublasLtMatmulDescDestroy(op);
  }
};

template <class T>
T cfg(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attr) {
  T v{};
  std::size_t w = 0;
  cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, &v, sizeof(v), &w);
  return v;
}

std::string describe(const cublasLtMatmulHeuristicResult_t& r) {
  char s[256];
  std::snprintf(s, sizeof(s), "algo=%d tile=%u stages=%u splitk=%d red=%u swizzle=%u custom=%u inner=%u cluster=%u ws=%zu waves=%.3f",
                cfg<std::int32_t>(r.algo, CUBLASLT_ALGO_CONFIG_ID), cfg<std::uint32_t>(r.algo, CUBLASLT_ALGO_CONFIG_TILE_ID),
                cfg<std::uint32_t>(r.algo, CUBLASLT_ALGO_CONFIG_STAGES_ID),
                cfg<std::int32_t>(r.algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM),
                cfg<std::uint32_t>(r.algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME),
                cfg<std::uint32_t>(r.algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING),
                cfg<std::uint32_t>(r.algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION),
                static_cast<unsigned>(cfg<std::uint16_t>(r.algo, CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID)),
                static_cast<unsigned>(cfg<std::uint16_t>(r.algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID)),
                r.workspaceSize, static_cast<double>(r.wavesCount));
  return s;
}

}  // namespace

extern "C" {

// cudakit's tunable::gemm: mode 0 Default (TunableOp disabled), 1 tuned (enabled, tuning on; the
// first call tunes: make it outside the timed calls).
int probe_cudakit(int mode, int dtype, char transa, char transb, long long m, long long n, long long k, long long lda,
                  long long ldb, long long ldc, long long batch, long long sa, long long sb, long long sc,
                  const void* a, const void* b, void* c, const float* scale_a, const float* scale_b, void* stream,
                  int iters, float* ms, char* err, int err_len) {
  try {
    // Only on a change: each switch makes the plans be rebuilt at their next call.
    if (t::is_enabled() != (mode == 1)) t::enable(mode == 1);
    if (mode == 1 && !t::tuning_is_enabled()) t::tuning_enable(true);
    t::GemmArgs g;
    t::GemmKey& key = g.key;
    key.op = dtype == 3 ? t::GemmOp::scaled_gemm : batch > 1 ? t::GemmOp::gemm_strided_batched : t::GemmOp::gemm;
    key.transa = transa;
    key.transb = transb;
    key.m = m, key.n = n, key.k = k, key.lda = lda, key.ldb = ldb, key.ldc = ldc;
    if (batch > 1) key.batch = batch, key.stride_a = sa, key.stride_b = sb, key.stride_c = sc;
    const t::GemmDType types[] = {t::GemmDType::float32, t::GemmDType::float16, t::GemmDType::bfloat16,
                                  t::GemmDType::float8_e4m3};
    key.a_type = key.b_type = types[dtype];
    key.c_type = dtype == 3 ? t::GemmDType::bfloat16 : types[dtype];
    g.a = a, g.b = b, g.c = c, g.scale_a = scale_a, g.scale_b = scale_b;
    const auto s = static_cast<cudaStream_t>(stream);
    int device = 0;
    cudaGetDevice(&device);
    const cudakit::StreamRef ref(s, device);
    return timed(s, iters, ms, err, err_len, [&] { t::gemm(g, ref); });
  } catch (const std::exception& e) {
    put(err, err_len, e.what());
    return -1;
  }
}

// cuBLAS as torch 2.11 calls it for 16-bit types on its cuBLAS path (gemm_internal_cublas_*):
// cublasGemmEx (batch 1) or cublasGemmStridedBatchedEx, compute CUDA_R_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP,
// default math mode, a 32 MiB workspace from cudaMalloc. `strided` 1: the strided-batched entry
// with a batch of one (cudakit's Default).
int probe_cublas(int strided, int dtype, char transa, char transb, long long m, long long n, long long k, long long lda,
                 long long ldb, long long ldc, long long batch, long long sa, long long sb, long long sc,
                 const void* a, const void* b, void* c, void* stream, int iters, float* ms, char* err, int err_len) {
  static cublasHandle_t h = [] {
    cublasHandle_t x = nullptr;
    cublasCreate(&x);
    return x;
  }();
  const auto s = static_cast<cudaStream_t>(stream);
  cublasSetStream(h, s);
  cublasSetWorkspace(h, lt_workspace(std::size_t{64} << 20), std::size_t{32} << 20);
  cublasSetMathMode(h, CUBLAS_DEFAULT_MATH);
  const float one = 1, zero = 0;
  const cublasOperation_t ta = transa == 't' ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t tb = transb == 't' ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cudaDataType_t ty = ab_type(dtype);
  if (dtype == 3) {
    put(err, err_len, "float8 has no cuBLAS entry");
    return -1;
  }
  cublasStatus_t status = CUBLAS_STATUS_SUCCESS;
  const int rc = timed(s, iters, ms, err, err_len, [&] {
    if (!strided && batch <= 1) {
      status = cublasGemmEx(h, ta, tb, (int)m, (int)n, (int)k, &one, a, ty, (int)lda, b, ty, (int)ldb, &zero, c, ty,
                            (int)ldc, dtype == 0 ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP);
    } else {
      status = cublasGemmStridedBatchedEx(h, ta, tb, (int)m, (int)n, (int)k, &one, a, ty, (int)lda, sa, b, ty, (int)ldb,
                                          sb, &zero, c, ty, (int)ldc, batch > 1 ? sc : ldc * n, (int)std::max(batch, 1LL),
                                          CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    }
  });
  if (status != CUBLAS_STATUS_SUCCESS) {
    put(err, err_len, std::string("cuBLAS status ") + std::to_string(status));
    return -1;
  }
  return rc;
}

// cuBLASLt as torch's bgemm_internal_cublaslt / scaled_gemm call it: a heuristic query with
// `workspace` bytes and, when align256 is 1, torch's alignment preferences (the largest power of
// two up to 256 dividing each pointer), else 16 (cudakit's class); then the heuristic's result number
// `index` is run. Writes the number of results to *count and the chosen configuration to `desc`.
int probe_lt(int dtype, char transa, char transb, long long m, long long n, long long k, long long lda, long long ldb,
             long long ldc, long long batch, long long sa, long long sb, long long sc, const void* a, const void* b,
             void* c, const float* scale_a, const float* scale_b, int fast_accum, long long workspace, int align256,
             int requested, int index, void* stream, int iters, float* ms, int* count, char* desc, int desc_len,
             char* err, int err_len) {
  const Problem p{dtype, transa, transb, m, n, k, lda, ldb, ldc, batch, sa, sb, sc};
  LtProblem d(p, scale_a, scale_b, fast_accum);
  cublasLtMatmulPreference_t pref = nullptr;
  cublasLtMatmulPreferenceCreate(&pref);
  const std::uint64_t ws = static_cast<std::uint64_t>(workspace);
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws));
  const std::uint32_t al_a = align256 ? alignment_of(a) : 16, al_b = align256 ? alignment_of(b) : 16,
                      al_c = align256 ? alignment_of(c) : 16;
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &al_a, sizeof(al_a));
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &al_b, sizeof(al_b));
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &al_c, sizeof(al_c));
  if (!align256) cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &al_c, sizeof(al_c));
  std::vector<cublasLtMatmulHeuristicResult_t> results(static_cast<std::size_t>(std::max(requested, 1)));
  int returned = 0;
  const cublasStatus_t hs = cublasLtMatmulAlgoGetHeuristic(lt(), d.op, d.a, d.b, d.c, d.c, pref, requested,
                                                           results.data(), &returned);
  cublasLtMatmulPreferenceDestroy(pref);
  if (count) *count = returned;
  if (hs != CUBLAS_STATUS_SUCCESS || index >= returned) {
    put(err, err_len, "heuristic status " + std::to_string(hs) + ", " + std::to_string(returned) + " results");
    return -1;
  }
  const cublasLtMatmulHeuristicResult_t& r = results[static_cast<std::size_t>(index)];
  put(desc, desc_len, describe(r));
  void* wsp = lt_workspace(std::size_t{64} << 20);
  const float one = 1, zero = 0;
  const auto s = static_cast<cudaStream_t>(stream);
  cublasStatus_t status = CUBLAS_STATUS_SUCCESS;
  const int rc = timed(s, iters, ms, err, err_len, [&] {
    status = cublasLtMatmul(lt(), d.op, &one, a, d.a, b, d.b, &zero, c, d.c, c, d.c, &r.algo, wsp, ws, s);
  });
  if (status != CUBLAS_STATUS_SUCCESS) {
    put(err, err_len, std::string("cublasLtMatmul status ") + std::to_string(status));
    return -1;
  }
  return rc;
}

// A copy of `bytes` at `src` in memory from cudakit's caching allocator (expandable segments by
// default: cuMemCreate/cuMemMap, where torch's default is cudaMalloc), so that the same GEMM can
// be timed on the two kinds of memory. Null when the allocation fails.
void* probe_cudakit_copy(const void* src, long long bytes) {
  try {
    void* p = cudakit::memory::allocate(static_cast<std::size_t>(bytes));
    cudaMemcpy(p, src, static_cast<std::size_t>(bytes), cudaMemcpyDeviceToDevice);
    return p;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "probe_cudakit_copy: %s\n", e.what());
    return nullptr;
  }
}

void probe_cudakit_free(void* p) {
  try {
    cudakit::memory::deallocate(p);
  } catch (const std::exception&) {
  }
}

// TunableOp's results of the current device, one "key -> solution,time" a line, into `out`.
int probe_results(char* out, int len) {
  try {
    std::string text;
    for (const auto& [key, value] : t::get_results()) text += key + " -> " + value + "\n";
    put(out, len, text);
    return static_cast<int>(text.size());
  } catch (const std::exception& e) {
    put(out, len, e.what());
    return -1;
  }
}

// TunableOp's results written to / read from `path` (so that a later process runs the same tuned
// solutions without tuning again); 0 on success.
int probe_results_file(const char* path, int write) {
  try {
    if (write) {
      t::write_file(path);
      return 0;
    }
    return t::read_file(path) ? 0 : -1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "probe_results_file: %s\n", e.what());
    return -1;
  }
}

// cuBLAS's and cuBLASLt's loggers (every message, API traces among them) into `path`, with the
// caller's markers between them; the libraries are the process's (torch's wheel's, loaded first),
// so torch's calls are logged as cudakit's. path null: logging off.
namespace {
FILE* g_log = nullptr;
void lt_log(int level, const char* fn, const char* msg) {
  if (g_log) std::fprintf(g_log, "[lt %d %s] %s\n", level, fn ? fn : "", msg ? msg : "");
}
void blas_log(const char* msg) {
  if (g_log) std::fprintf(g_log, "[cublas] %s", msg ? msg : "");
}
}  // namespace

int probe_log(const char* path) {
  if (g_log) std::fclose(g_log);
  g_log = path ? std::fopen(path, "w") : nullptr;
  if (path && !g_log) return -1;
  return 0;
}

// Both loggers on (1) or off (0), into probe_log's file.
void probe_log_enable(int on) {
  cudaDeviceSynchronize();
  if (on) {
    cublasLtLoggerSetCallback(&lt_log);
    cublasLtLoggerSetMask(31);
    cublasLoggerConfigure(1, 0, 0, nullptr);
    cublasSetLoggerCallback(&blas_log);
  } else {
    cublasLtLoggerSetMask(0);
    cublasLoggerConfigure(0, 0, 0, nullptr);
  }
  if (g_log) std::fflush(g_log);
}

void probe_log_mark(const char* text) {
  if (g_log) {
    cudaDeviceSynchronize();
    std::fprintf(g_log, "\n===== %s =====\n", text);
    std::fflush(g_log);
  }
}

}  // extern "C"
