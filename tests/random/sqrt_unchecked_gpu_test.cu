// sqrt_unchecked's device sequence (__fsqrt_rn's fast path without its range check) against
// __fsqrt_rn itself, for every float of its range [2^-101, FLT_MAX]: the bit identity of Box-Muller between the
// host (std::sqrt) and the device rests on it (See Note [Box-Muller radius]).

#include <gtest/gtest.h>

#include <cstdint>

#include "cudakit/core/error.hpp"
#include "cudakit/random/detail/exact_float.hpp"
#include "support/gpu_test.hpp"

namespace {

__global__ void count_sqrt_mismatches(std::uint32_t first_bits, std::uint32_t count,
                                      unsigned long long* mismatches, std::uint32_t* example) {
  unsigned long long local = 0;
  for (std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x) {
    const float x = __uint_as_float(first_bits + i);
    if (__float_as_uint(cudakit::random::detail::sqrt_unchecked(x)) != __float_as_uint(__fsqrt_rn(x))) {
      ++local;
      *example = first_bits + i;
    }
  }
  if (local != 0) atomicAdd(mismatches, local);
}

TEST(RandomGpu, SqrtUncheckedIsCorrectlyRoundedOverItsWholeRange) {
  CUDAKIT_REQUIRE_GPU();
  unsigned long long* mismatches = nullptr;
  std::uint32_t* example = nullptr;
  CUDAKIT_CHECK_CUDA(cudaMallocManaged(&mismatches, sizeof *mismatches));
  CUDAKIT_CHECK_CUDA(cudaMallocManaged(&example, sizeof *example));
  *mismatches = 0;
  *example = 0;
  const std::uint32_t first = 0x0d000000u;          // 2^-101
  const std::uint32_t count = 0x7f800000u - first;  // up to FLT_MAX
  count_sqrt_mismatches<<<1024, 256>>>(first, count, mismatches, example);
  CUDAKIT_CHECK_CUDA(cudaGetLastError());
  CUDAKIT_CHECK_CUDA(cudaDeviceSynchronize());
  EXPECT_EQ(*mismatches, 0u) << "e.g. bits 0x" << std::hex << *example;
  CUDAKIT_CHECK_CUDA(cudaFree(mismatches));
  CUDAKIT_CHECK_CUDA(cudaFree(example));
}

}  // namespace
