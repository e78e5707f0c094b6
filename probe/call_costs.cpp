// Device probe (not part of the build): the host time of the runtime and driver calls behind two
// open gaps, each the median of five rounds of 20,000 calls, in microseconds a call.
// - The caching allocator's look at an idle stream (CudaStreamEvents::idle: the thread's capture
//   mode exchanged to relaxed and back around cudaStreamQuery) against its parts, the driver's
//   own calls (through cudaGetDriverEntryPointByVersion, as cudakit reaches the driver) and an event's
//   record and query (what a look costs when it marks instead of asking the stream):
//   notes/allocator.md, serve_8t's idle checks.
// - A GEMM's call into cuBLAS for one small product: cublasGemmEx (torch's mm) against
//   cublasGemmStridedBatchedEx with a batch of one (cudakit's Default before Note [One product,
//   one cublasGemmEx]): notes/tunable.md.
//   g++ -O2 -std=c++20 -I/usr/local/cuda/include probe/call_costs.cpp -L/usr/local/cuda/lib64 \
//       -lcudart -lcublas -o /tmp/call_costs && /tmp/call_costs
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

namespace {

double per_call_us(const auto& call, int calls = 20000) {
  std::vector<double> rounds;
  for (int r = 0; r < 5; ++r) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) call();
    rounds.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() / calls);
  }
  std::sort(rounds.begin(), rounds.end());
  return rounds[2];
}

// One look as the allocator makes it: the thread's capture mode exchanged for `relaxed` around
// `query`, then back (the runtime's and the driver's exchange differ only in their types).
template <class Mode, class Exchange, class Query>
void relaxed_around(Mode relaxed, Exchange exchange, Query query) {
  Mode mode = relaxed;
  exchange(&mode);
  query();
  exchange(&mode);
}

template <class F>
F entry_point(const char* name) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &found) != cudaSuccess || !fn) {
    std::fprintf(stderr, "no driver entry point %s\n", name);
    return nullptr;
  }
  return reinterpret_cast<F>(fn);
}

}  // namespace

int main() {
  cudaSetDevice(0);
  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  cudaEvent_t event;
  cudaEventCreateWithFlags(&event, cudaEventDisableTiming);
  cudaStreamSynchronize(stream);
  auto cu_query = entry_point<CUresult (*)(CUstream)>("cuStreamQuery");
  auto cu_exchange = entry_point<CUresult (*)(CUstreamCaptureMode*)>("cuThreadExchangeStreamCaptureMode");
  auto cu_record = entry_point<CUresult (*)(CUevent, CUstream)>("cuEventRecord");
  auto cu_event_query = entry_point<CUresult (*)(CUevent)>("cuEventQuery");
  const auto cu_stream = reinterpret_cast<CUstream>(stream);
  const auto cu_event = reinterpret_cast<CUevent>(event);

  std::printf("an idle stream, microseconds a call:\n");
  std::printf("  cudaStreamQuery                                      %.3f\n",
              per_call_us([&] { (void)cudaStreamQuery(stream); }));
  std::printf("  relaxed capture mode around cudaStreamQuery (idle()) %.3f\n", per_call_us([&] {
                relaxed_around(cudaStreamCaptureModeRelaxed, cudaThreadExchangeStreamCaptureMode,
                               [&] { (void)cudaStreamQuery(stream); });
              }));
  if (cu_query && cu_exchange) {
    std::printf("  cuStreamQuery                                        %.3f\n",
                per_call_us([&] { (void)cu_query(cu_stream); }));
    std::printf("  relaxed capture mode around cuStreamQuery            %.3f\n", per_call_us([&] {
                  relaxed_around(CU_STREAM_CAPTURE_MODE_RELAXED, cu_exchange, [&] { (void)cu_query(cu_stream); });
                }));
  }
  std::printf("  cudaEventRecord + cudaEventQuery                     %.3f\n", per_call_us([&] {
                cudaEventRecord(event, stream);
                (void)cudaEventQuery(event);
              }));
  if (cu_record && cu_event_query) {
    std::printf("  cuEventRecord + cuEventQuery                         %.3f\n", per_call_us([&] {
                  cu_record(cu_event, cu_stream);
                  (void)cu_event_query(cu_event);
                }));
  }

  // One 64 x 64 x 64 float16 product: its kernel is shorter than the host's call, so the loop
  // measures the host.
  cublasHandle_t handle;
  cublasCreate(&handle);
  cublasSetStream(handle, stream);
  void* buffers[3];
  for (void*& b : buffers) cudaMalloc(&b, 64 * 64 * 2);
  const float one = 1, zero = 0;
  std::printf("a 64^3 float16 product, microseconds a call:\n");
  const double ex = per_call_us([&] {
    cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, 64, 64, 64, &one, buffers[0], CUDA_R_16F, 64, buffers[1],
                 CUDA_R_16F, 64, &zero, buffers[2], CUDA_R_16F, 64, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  }, 5000);
  cudaStreamSynchronize(stream);
  const double strided = per_call_us([&] {
    cublasGemmStridedBatchedEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, 64, 64, 64, &one, buffers[0], CUDA_R_16F, 64, 0,
                               buffers[1], CUDA_R_16F, 64, 0, &zero, buffers[2], CUDA_R_16F, 64, 64 * 64, 1,
                               CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  }, 5000);
  cudaStreamSynchronize(stream);
  std::printf("  cublasGemmEx                                         %.3f\n", ex);
  std::printf("  cublasGemmStridedBatchedEx, a batch of one           %.3f\n", strided);
  for (void* b : buffers) cudaFree(b);
  cublasDestroy(handle);
  cudaEventDestroy(event);
  cudaStreamDestroy(stream);
  return 0;
}
