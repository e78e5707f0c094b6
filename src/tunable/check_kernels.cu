#include "tunable/detail/check_kernels.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <array>
#include <cmath>
#include <cstring>

#include "cudakit/core/copy.hpp"
#include "cudakit/core/error.hpp"
#include "cudakit/core/grid_stride.cuh"
#include "cudakit/core/launch.cuh"
#include "cudakit/memory/device_allocator.hpp"
#include "tunable/detail/operand_bytes.hpp"

namespace cudakit::tunable::detail {
namespace {

constexpr int kThreads = 256;

__device__ double to_double(const void* p, GemmDType t, std::size_t i) {
  switch (t) {
    case GemmDType::float16: return __half2float(static_cast<const __half*>(p)[i]);
    case GemmDType::bfloat16: return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]);
    case GemmDType::float64: return static_cast<const double*>(p)[i];
    case GemmDType::float8_e4m3: return static_cast<float>(static_cast<const __nv_fp8_e4m3*>(p)[i]);
    case GemmDType::float8_e5m2: return static_cast<float>(static_cast<const __nv_fp8_e5m2*>(p)[i]);
    case GemmDType::float32: break;
  }
  return static_cast<const float*>(p)[i];
}

__device__ void store(void* p, GemmDType t, std::size_t i, float v) {
  switch (t) {
    case GemmDType::float16: static_cast<__half*>(p)[i] = __float2half_rn(v); return;
    case GemmDType::bfloat16: static_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16_rn(v); return;
    case GemmDType::float64: static_cast<double*>(p)[i] = v; return;
    case GemmDType::float8_e4m3: static_cast<__nv_fp8_e4m3*>(p)[i] = __nv_fp8_e4m3(v); return;
    case GemmDType::float8_e5m2: static_cast<__nv_fp8_e5m2*>(p)[i] = __nv_fp8_e5m2(v); return;
    case GemmDType::float32: break;
  }
  static_cast<float*>(p)[i] = v;
}

__device__ std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

__global__ void fill_random_kernel(void* data, GemmDType t, std::size_t count, std::uint64_t seed) {
  for (std::size_t i = grid_thread_index<std::size_t>(); i < count; i += grid_thread_count<std::size_t>()) {
    const std::uint64_t bits = mix(seed * 0x9e3779b97f4a7c15ull + i);
    const float u = static_cast<float>(bits >> 40) * (1.0f / 16777216.0f);  // [0, 1)
    store(data, t, i, 2.0f * u - 1.0f);
  }
}

__global__ void fill_value_kernel(void* data, GemmDType t, std::size_t count, float value) {
  for (std::size_t i = grid_thread_index<std::size_t>(); i < count; i += grid_thread_count<std::size_t>()) store(data, t, i, value);
}

// Element e of the m x n (x batch) matrices: its offset.
__device__ std::size_t offset_of(std::size_t e, std::int64_t m, std::int64_t n, std::int64_t ldc, std::int64_t stride) {
  const std::size_t per = static_cast<std::size_t>(m) * static_cast<std::size_t>(n);
  const std::size_t b = e / per, r = e % per;
  return b * static_cast<std::size_t>(stride) + (r / m) * static_cast<std::size_t>(ldc) + r % m;
}

__global__ void sum_squares_kernel(const void* ref, GemmDType t, std::size_t count, std::int64_t m, std::int64_t n,
                                   std::int64_t ldc, std::int64_t stride, double* sum) {
  double local = 0;
  for (std::size_t e = grid_thread_index<std::size_t>(); e < count; e += grid_thread_count<std::size_t>()) {
    const double v = to_double(ref, t, offset_of(e, m, n, ldc, stride));
    if (v - v == 0) local += v * v;
  }
  for (int o = 16; o > 0; o /= 2) local += __shfl_xor_sync(0xffffffffu, local, o);
  if (threadIdx.x % 32 == 0) atomicAdd(sum, local);
}

// Ratios are non-negative, so their float bits order as unsigned integers; NaN is stored as
// 0xffffffff, above every number.
__global__ void max_ratio_kernel(const void* got, const void* ref, GemmDType t, std::size_t count, std::int64_t m,
                                 std::int64_t n, std::int64_t ldc, std::int64_t stride, Tolerance tol,
                                 const double* sum_squares, unsigned* max_bits) {
  const double rms = sqrt(*sum_squares / static_cast<double>(count));
  unsigned local = 0;
  for (std::size_t e = grid_thread_index<std::size_t>(); e < count; e += grid_thread_count<std::size_t>()) {
    const std::size_t o = offset_of(e, m, n, ldc, stride);
    const double ratio = tolerance_ratio(to_double(got, t, o), to_double(ref, t, o), rms, tol);
    const unsigned bits = ratio != ratio ? 0xffffffffu : __float_as_uint(static_cast<float>(fmin(ratio, 1e30)));
    local = max(local, bits);
  }
  for (int o = 16; o > 0; o /= 2) local = max(local, __shfl_xor_sync(0xffffffffu, local, o));
  if (threadIdx.x % 32 == 0) atomicMax(max_bits, local);
}

unsigned blocks_for(std::size_t count) {
  return static_cast<unsigned>(std::min<std::size_t>((count + kThreads - 1) / kThreads, 4096));
}

// What the fill kernels write: `count` elements of `dtype` from `data`.
auto writes_elements(void* data, GemmDType dtype, std::size_t count) {
  return with_accesses([=] {
    return std::array{MemoryAccess{data, count * element_size(dtype), MemoryAccess::Mode::write, "data"}};
  });
}

}  // namespace

void fill_random(void* data, GemmDType dtype, std::size_t count, std::uint64_t seed, StreamRef stream) {
  if (count == 0) return;
  launch_kernel("tunable.fill_random", fill_random_kernel, {dim3(blocks_for(count)), dim3(kThreads)}, stream,
                writes_elements(data, dtype, count),
                data, dtype, count, seed);
}

// Not const: a const namespace-scope variable may have no symbol to take the address of.
__device__ float kUnitScale = 1.0f;

const float* device_unit_scale() {
  void* address = nullptr;
  CUDAKIT_CHECK_CUDA(cudaGetSymbolAddress(&address, kUnitScale));
  return static_cast<const float*>(address);
}

void fill_value(void* data, GemmDType dtype, std::size_t count, float value, StreamRef stream) {
  if (count == 0) return;
  launch_kernel("tunable.fill_value", fill_value_kernel, {dim3(blocks_for(count)), dim3(kThreads)}, stream,
                writes_elements(data, dtype, count),
                data, dtype, count, value);
}

double max_tolerance_ratio(const void* got, const void* ref, GemmDType dtype, std::int64_t m, std::int64_t n,
                           std::int64_t ldc, std::int64_t batch, std::int64_t stride, Tolerance tolerance,
                           StreamRef stream) {
  const std::size_t count = static_cast<std::size_t>(m) * static_cast<std::size_t>(n) * static_cast<std::size_t>(batch);
  if (count == 0) return 0;
  struct Scratch {
    double sum_squares;
    unsigned max_bits;
  };
  void* scratch = memory::allocate(sizeof(Scratch), stream);
  auto* s = static_cast<Scratch*>(scratch);
  unsigned bits = 0;
  try {
    memset_async(scratch, 0, sizeof(Scratch), stream);
    const std::size_t matrix = operand_bytes(m, n, ldc, batch, stride, dtype);  // what the checks read of each
    launch_kernel("tunable.sum_squares", sum_squares_kernel, {dim3(blocks_for(count)), dim3(kThreads)}, stream,
                  with_accesses([&] {
                    return std::array{MemoryAccess{ref, matrix, MemoryAccess::Mode::read, "ref"},
                                      MemoryAccess{scratch, sizeof(Scratch), MemoryAccess::Mode::read_write, "scratch"}};
                  }),
                  ref, dtype, count, m, n, ldc, stride, &s->sum_squares);
    launch_kernel("tunable.max_ratio", max_ratio_kernel, {dim3(blocks_for(count)), dim3(kThreads)}, stream,
                  with_accesses([&] {
                    return std::array{MemoryAccess{got, matrix, MemoryAccess::Mode::read, "got"},
                                      MemoryAccess{ref, matrix, MemoryAccess::Mode::read, "ref"},
                                      MemoryAccess{scratch, sizeof(Scratch), MemoryAccess::Mode::read_write, "scratch"}};
                  }),
                  got, ref, dtype, count, m, n, ldc, stride, tolerance, static_cast<const double*>(&s->sum_squares),
                  &s->max_bits);
    Scratch host{};
    memcpy_async(&host, scratch, sizeof(Scratch), cudaMemcpyDeviceToHost, stream);
    CUDAKIT_CHECK_CUDA(cudaStreamSynchronize(stream.handle()));
    bits = host.max_bits;
  } catch (...) {
    memory::deallocate(scratch);
    throw;
  }
  memory::deallocate(scratch);
  if (bits == 0xffffffffu) return std::nan("");
  float ratio = 0;
  std::memcpy(&ratio, &bits, sizeof ratio);
  return ratio;
}

}  // namespace cudakit::tunable::detail
